"""The one reader of checkpoint files: a path (or an already loaded
checkpoint) in, its state dict and where it was found out.

Every loader of weights goes through :func:`read_checkpoint_state`: the
``Pretrained`` init of scope ``mmsiameseim``, ``ViTDetViT`` (mmdet),
``SiameseIMMAE`` (mmseg), the checkpoint converters
(:mod:`mmsiameseim.apis.convert`) and the reader of the authors' checkpoints
(:func:`mmsiameseim.apis.load_official_state_dict`, ``build_from_official``).

Where the state dict is looked up, in this order (:data:`STATE_DICT_KEYS`):

1. under ``'state_dict'``: mmengine's Runner saves
   ``{'meta', 'state_dict', 'optimizer', 'message_hub', ...}``;
2. under ``'model'``: the authors' (and DeiT/MAE-style) training scripts
   save ``{'model', 'optimizer', 'epoch', 'scaler', 'args'}``;
3. the checkpoint itself: a bare ``torch.save(model.state_dict())``.

A leading ``module.`` (a model saved inside its DDP wrapper) is removed.
"""
import os
from typing import Any, Dict, NamedTuple, Optional, Union

import torch

from .keys import short_list, strip_prefix

STATE_DICT_KEYS = ('state_dict', 'model')
WRAPPER_PREFIX = 'module.'
Checkpoint = Union[str, os.PathLike, Dict[str, Any]]  # or a loaded object


class CheckpointState(NamedTuple):
    """A checkpoint's state dict and where the reader found it.

    Attributes:
        state_dict (dict): The tensors, ``module.`` removed.
        source (str): The file (or ``'the checkpoint'`` for one given
            already loaded), for messages.
        found_under (str, optional): ``'state_dict'`` or ``'model'``; None
            when the checkpoint is the state dict itself.
        unwrapped (int): How many keys had the ``module.`` prefix.
    """
    state_dict: Dict[str, torch.Tensor]
    source: str
    found_under: Optional[str]
    unwrapped: int

    @property
    def where(self) -> str:
        """``"under 'state_dict'"`` or ``'at its top level'``."""
        return (f'under {self.found_under!r}'
                if self.found_under else 'at its top level')


def read_checkpoint(path: Union[str, os.PathLike],
                    map_location: str = 'cpu') -> Any:
    """Load a checkpoint file with weights-only unpickling; a URL
    (``https://``, ``open-mmlab://`` ...) through mmengine's loader.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not a PyTorch checkpoint; the message names
            the file, the loader's error and, for a text file, how it
            starts.
    """
    import mmsiameseim.patches  # noqa: F401  (mmengine checkpoint globals)
    try:
        if '://' in str(path):
            from mmengine.runner.checkpoint import _load_checkpoint
            return _load_checkpoint(str(path), map_location=map_location)
        return torch.load(path, map_location=map_location, weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001  (any unpickling error)
        raise ValueError(
            f'{path}: cannot be read as a PyTorch checkpoint (a file written '
            f'by torch.save was expected; torch.load says '
            f'{type(e).__name__}: {str(e)[:300]}){_text_start(path)}') from e


def _text_start(path) -> str:
    """``"; it is text, starting '...'"`` for a text file, else ''."""
    try:
        with open(path, 'rb') as f:
            head = f.read(60)
    except OSError:  # a directory, unreadable, a URL
        return ''
    try:
        text = head.decode('utf-8')
    except UnicodeDecodeError as u:  # binary, or a cut last character
        text = head[:u.start].decode('utf-8') if u.start > 56 else ''
    is_text = text and all(c.isprintable() or c.isspace() for c in text)
    return f'; it is text, starting {text!r}' if is_text else ''


def _keys_of(mapping: dict, limit: int = 40) -> str:
    keys = sorted(map(str, mapping))
    return str(keys[:limit]) + (' ...' if len(keys) > limit else '')


def read_checkpoint_state(checkpoint: Checkpoint,
                          map_location: str = 'cpu') -> CheckpointState:
    """The state dict of a checkpoint, looked up under ``'state_dict'``, then
    ``'model'``, then at the top level (see the module's notes).

    Args:
        checkpoint (str | PathLike | dict): A file, a URL, or a checkpoint
            already loaded (anything but a path is taken as loaded).
        map_location (str): Where to load the tensors. Defaults to 'cpu'.

    Returns:
        CheckpointState: The tensors and where they were found.

    Raises:
        FileNotFoundError: No such file.
        ValueError: Not a PyTorch checkpoint, not a dict, or the entry found
            is not a dict of tensors; the message names the file (given a
            path), where it looked and what it found.
    """
    is_file = isinstance(checkpoint, (str, os.PathLike))
    source = str(checkpoint) if is_file else 'the checkpoint'
    at = f'{source}: ' if is_file else ''
    ckpt = (
        read_checkpoint(checkpoint, map_location) if is_file else checkpoint)
    if not isinstance(ckpt, dict):
        raise ValueError(
            f'{at}expected a checkpoint dict (a state dict, or one under '
            f'{" or ".join(map(repr, STATE_DICT_KEYS))}), got '
            f'{type(ckpt).__name__}')
    key = next((k for k in STATE_DICT_KEYS if k in ckpt), None)
    state = ckpt[key] if key else ckpt
    if not isinstance(state, dict):
        raise ValueError(
            f'{at}its {key!r} entry is a {type(state).__name__}, not a state '
            'dict; the checkpoint holds no state dict (looked under '
            f"'state_dict' and 'model'); its keys are {_keys_of(ckpt)}")
    other = [
        str(k) for k, v in state.items() if not isinstance(v, torch.Tensor)
    ]
    if other:
        looked = f'under {key!r}' if key else (
            "under 'state_dict', 'model' and at the top")
        raise ValueError(f'{at}holds no state dict of tensors (looked '
                         f'{looked}); these keys are not tensors: '
                         f'{short_list(other)}')
    unwrapped = sum(k.startswith(WRAPPER_PREFIX) for k in state)
    return CheckpointState(
        strip_prefix(state, WRAPPER_PREFIX, keep_others=True), source, key,
        unwrapped)


def read_state_dict(checkpoint: Checkpoint,
                    map_location: str = 'cpu') -> Dict[str, torch.Tensor]:
    """The state dict of :func:`read_checkpoint_state`, without the notes of
    where it was found."""
    return read_checkpoint_state(checkpoint, map_location).state_dict
