"""Refuse a pretrained checkpoint that does not supply the weights a model
needs, naming what is missing and what the file holds.

Used by the ViT checkpoint adapter (:mod:`.vit_checkpoint_adapter`), through
which every loader of pretrained encoders goes, and by the converters'
messages.
"""
import fnmatch
import logging
from collections import Counter
from typing import Any, Dict, Iterable, List, Sequence

import torch
from mmengine.logging import print_log


def short_list(keys: Iterable[str], limit: int = 10) -> str:
    """The first ``limit`` keys, and how many there are in all."""
    keys = list(keys)
    head = ', '.join(keys[:limit])
    return head + (f', ... ({len(keys)} in all)' if len(keys) > limit else '')


def group_keys(keys: Iterable[str], depth: int = 1) -> Dict[str, int]:
    """How many keys share each first ``depth`` name parts, in order:
    ``{'backbone': 28, 'neck': 12}``."""
    return dict(Counter('.'.join(k.split('.')[:depth]) for k in keys))


def describe_keys(keys: Iterable[str], depth: int = 2,
                  limit: int = 12) -> str:
    """What a state dict holds, grouped by the first ``depth`` name parts:
    ``'122 tensors: backbone.conv1 (1), backbone.bn1 (5), ...'``."""
    keys = list(keys)
    groups = group_keys(keys, depth)
    parts = [f'{name} ({n})' for name, n in list(groups.items())[:limit]]
    if len(groups) > limit:
        parts.append(f'... ({len(groups)} groups in all)')
    return f'{len(keys)} tensors: ' + (', '.join(parts) or 'none')


def read_checkpoint(path: str, map_location: str = 'cpu') -> Any:
    """Load a checkpoint file with weights-only unpickling; a URL
    (``https://``, ``open-mmlab://`` ...) through mmengine's loader.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not a PyTorch checkpoint; the message names
            the file, the loader's error and, for a text file, how it
            starts.
    """
    import mmsiameseim.compat  # noqa: F401  (mmengine checkpoint globals)
    try:
        if '://' in str(path):
            from mmengine.runner.checkpoint import _load_checkpoint
            return _load_checkpoint(path, map_location=map_location)
        return torch.load(path, map_location=map_location, weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001  (any unpickling error)
        try:
            with open(path, 'rb') as f:
                head = f.read(60)
        except OSError:  # a directory, unreadable, a URL
            head = b''
        try:
            text = head.decode('utf-8')
        except UnicodeDecodeError as u:  # binary, or a cut last character
            text = head[:u.start].decode('utf-8') if u.start > 56 else ''
        is_text = text and all(c.isprintable() or c.isspace() for c in text)
        found = f'; it is text, starting {text!r}' if is_text else ''
        raise ValueError(
            f'{path}: cannot be read as a PyTorch checkpoint (a file written '
            f'by torch.save was expected; torch.load says '
            f'{type(e).__name__}: {str(e)[:300]}){found}') from e


def read_state_dict(checkpoint: str,
                    map_location: str = 'cpu') -> Dict[str, torch.Tensor]:
    """The state dict of a checkpoint file (under ``'state_dict'`` if there
    is one; a leading ``module.`` of wrapped models removed).

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not a PyTorch checkpoint or holds no
            state dict; the message names the file.
    """
    ckpt = read_checkpoint(checkpoint, map_location)
    state = ckpt.get('state_dict', ckpt) if isinstance(ckpt, dict) else ckpt
    if not isinstance(state, dict):
        raise ValueError(f'{checkpoint}: holds a {type(state).__name__}, '
                         'not a state dict')
    other = [k for k, v in state.items() if not isinstance(v, torch.Tensor)]
    if other:
        raise ValueError(f'{checkpoint}: holds no state dict of tensors '
                         "(looked under 'state_dict' and at the top); "
                         f'these keys are not tensors: {short_list(other)}')
    from .vit_adapter import strip_prefix  # (imports this file)
    return strip_prefix(state, 'module.', keep_others=True)


def check_coverage(expected: Sequence[str],
                   supplied: Iterable[str],
                   *,
                   model: str,
                   source: str,
                   file_keys: Iterable[str],
                   allow_missing: Sequence[str] = (),
                   allow_partial: bool = False) -> List[str]:
    """Refuse a checkpoint that supplies too few of the weights a model
    needs.

    "Too few" is any: every key of ``expected`` must be in ``supplied``,
    except those matching a pattern of ``allow_missing`` (keys that are
    new by design, e.g. relative position tables a pretraining checkpoint
    does not have). ``allow_partial=True`` accepts a checkpoint that lacks
    some of the others (they keep their initialisation) and logs the
    counts and names at WARNING; a checkpoint that supplies none of them is
    refused even then.

    Args:
        expected: The model's keys (its ``state_dict()`` names).
        supplied: The checkpoint's keys, in the model's naming (prefix
            stripped, adapted).
        model: The model's name, for messages.
        source: The checkpoint file (and prefix), for messages.
        file_keys: The keys of the whole file as the user wrote them, to say
            what it holds.
        allow_missing: ``fnmatch`` patterns of model keys that may be absent.
        allow_partial: Accept a checkpoint lacking other keys too.

    Returns:
        list: The required keys the checkpoint lacks (empty unless
        ``allow_partial``).

    Raises:
        ValueError: Too few weights; the message names the file, the count,
            the missing keys and what the file holds.
    """
    supplied = set(supplied)
    required = [k for k in expected
                if not any(fnmatch.fnmatchcase(k, p) for p in allow_missing)]
    missing = [k for k in required if k not in supplied]
    found = len(required) - len(missing)
    if missing and (not allow_partial or found == 0):
        hint = '' if allow_partial else (
            '. If a partial load is intended, set allow_partial=True in the '
            'init_cfg')
        raise ValueError(
            f'{source}: refusing to initialise {model} from this '
            f'checkpoint: it supplies {found} of the {len(required)} '
            f'weights the model needs; missing {len(missing)}: '
            f'{short_list(missing)}; the file holds '
            f'{describe_keys(file_keys)}{hint}')
    if missing:
        print_log(
            f'{source}: allow_partial: {model} loads {found} of the '
            f'{len(required)} weights it needs; {len(missing)} keep their '
            f'initialisation: {short_list(missing, 40)}',
            logger='current', level=logging.WARNING)
    return missing
