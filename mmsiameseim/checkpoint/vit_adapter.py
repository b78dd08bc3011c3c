"""One adapter from a pretraining checkpoint to a ViT's own weights.

Every loader of pretrained ViT encoders goes through these functions: the
``Pretrained`` init of scope ``mmsiameseim`` (mmpretrain configs),
``ViTDetViT`` (mmdet), ``SiameseIMMAE`` (mmseg), the checkpoint converters
(:mod:`mmsiameseim.apis.convert`) and ``build_from_official``. The pieces:

- :func:`grid_side`: the side of the square patch grid of a position table;
- :func:`resize_pos_embed_to`: the patch grid of a position table resized
  bicubically (mmpretrain's ``resize_pos_embed``; cls position kept);
- :func:`adapt_in_channels`: a 1-channel (grayscale) patch embedding for a
  model of more input channels;
- :func:`adapt_vit_checkpoint`: all of the above for one model, with a
  :class:`KeyReport` of what was loaded, adapted, new, dropped and ignored.

The checkpoint is read by :mod:`.reader`; the coverage check is in
:mod:`.coverage`; :func:`~.keys.strip_prefix` (the keys under a prefix
such as ``'backbone.'``) in :mod:`.keys`. Nothing here imports mmdet or
mmseg.
"""
import fnmatch
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import torch
from mmpretrain.models.utils import resize_pos_embed

from .coverage import check_coverage
from .dropped import check_dropped
from .keys import describe_keys, strip_prefix

POS_EMBED = 'pos_embed'
PATCH_WEIGHT = 'patch_embed.projection.weight'


def grid_side(num_tokens: int,
              num_extra_tokens: int = 1,
              key: str = POS_EMBED) -> int:
    """The side of the square patch grid of a position table.

    Args:
        num_tokens (int): Rows of the table (extra tokens included).
        num_extra_tokens (int): Leading rows that are not patches (the cls
            position). Defaults to 1.
        key (str): The table's name, for the message.

    Raises:
        ValueError: ``num_tokens - num_extra_tokens`` is not a square.
    """
    patches = num_tokens - num_extra_tokens
    side = int(round(max(patches, 0)**0.5))
    if patches <= 0 or side * side != patches:
        raise ValueError(
            f'{key} has {patches} patch positions plus {num_extra_tokens} '
            'extra (cls): not a square grid')
    return side


def resize_pos_embed_to(pos_embed: torch.Tensor,
                        grid: Tuple[int, int],
                        num_extra_tokens: int = 1,
                        mode: str = 'bicubic',
                        key: str = POS_EMBED) -> torch.Tensor:
    """Resize the square patch grid of a (1, L, C) position table to ``grid``;
    the extra (cls) rows are kept as they are.

    Args:
        pos_embed (Tensor): The table, (1, extra + g * g, C).
        grid (tuple[int, int]): The patch grid wanted, (rows, columns).
        num_extra_tokens (int): Leading rows that are not patches.
            Defaults to 1.
        mode (str): Interpolation, as ``F.interpolate``. Defaults to
            'bicubic' (mmpretrain, mmseg and ViTDet resize this way).
        key (str): The table's name, for messages.

    Returns:
        Tensor: (1, extra + rows * columns, C), the input's dtype; the
        input itself when the grid is the same.
    """
    side = grid_side(pos_embed.shape[1], num_extra_tokens, key)
    return resize_pos_embed(
        pos_embed, (side, side),
        tuple(grid),
        mode=mode,
        num_extra_tokens=num_extra_tokens)


def adapt_in_channels(weight: torch.Tensor,
                      in_channels: int,
                      key: str = PATCH_WEIGHT) -> torch.Tensor:
    """A 1-channel patch embedding (grayscale pretraining) for a model of
    ``in_channels`` inputs: repeated and divided by ``in_channels``, so a gray
    image given as ``in_channels`` equal planes gives exactly the grayscale
    response.

    Args:
        weight (Tensor): (C, 1, p, p) convolution weight.
        in_channels (int): Input channels of the model.
        key (str): The weight's name, for the message.

    Raises:
        ValueError: The weight has more than one input channel.
    """
    if weight.ndim != 4 or weight.shape[1] != 1:
        raise ValueError(f'{key}: only a 1-channel weight can be adapted to '
                         f'{in_channels} channels, got shape '
                         f'{tuple(weight.shape)}')
    return weight.repeat(1, in_channels, 1, 1) / in_channels


@dataclass
class KeyReport:
    """Where every key of a checkpoint went.

    Args:
        prefix (str): The prefix the model's keys have in the file.
        loaded (list[str]): Model keys copied as they are.
        adapted (list[str]): Model keys resized or channel-adapted, as
            ``'key (old shape) -> (new shape)'``.
        new (list[str]): Model keys absent from the checkpoint (they keep
            the model's initialisation).
        dropped (list[str]): Keys under ``prefix`` the model has no place
            for (e.g. a final norm the model is built without).
        ignored (list[str]): File keys outside ``prefix`` (neck, head,
            momentum target).
        kept (list[str]): Model keys the file holds but that keep the
            model's initialisation because ``keep_init`` names them.
    """
    prefix: str = ''
    loaded: List[str] = field(default_factory=list)
    adapted: List[str] = field(default_factory=list)
    new: List[str] = field(default_factory=list)
    dropped: List[str] = field(default_factory=list)
    ignored: List[str] = field(default_factory=list)
    kept: List[str] = field(default_factory=list)

    def format(self, title: str) -> str:
        """One summary line after ``title``, then the adapted and dropped keys
        one a line and the new and kept keys grouped by their last name
        part."""
        lines = [
            f'{title}: {len(self.loaded)} loaded, {len(self.adapted)} '
            f'adapted, {len(self.new)} new (model init), '
            f'{len(self.dropped)} dropped, {len(self.ignored)} ignored '
            f'(not {self.prefix}*)' +
            (f', {len(self.kept)} kept as initialised (keep_init)'
             if self.kept else '')
        ]
        for key in self.adapted:
            how = (' (1 channel repeated, divided by the channels)'
                   if key.startswith(PATCH_WEIGHT) else
                   ' (patch grid resized, bicubic)'
                   if key.startswith(POS_EMBED) else '')
            lines.append(f'  adapted: {key}{how}')
        lines += [f'  dropped: {key}' for key in self.dropped]
        for what, keys in (('new', self.new), ('kept as initialised',
                                               self.kept)):
            kinds: Dict[str, List[str]] = {}
            for key in keys:
                kinds.setdefault(key.split('.')[-1], []).append(key)
            lines += [
                f'  {what}: {len(group)} x {kind} (e.g. {group[0]})'
                for kind, group in kinds.items()
            ]
        return '\n'.join(lines)


def adapt_vit_checkpoint(
    state: Dict[str, torch.Tensor],
    target: Dict[str, torch.Tensor],
    *,
    model: str,
    checkpoint: str,
    prefix: str = 'backbone.',
    allow_missing: Sequence[str] = (),
    allow_partial: bool = False,
    allow_dropped: bool = False,
    adapt_shapes: bool = True,
    keep_init: Sequence[str] = (),
) -> Tuple[Dict[str, torch.Tensor], KeyReport]:
    """Bring the ``prefix`` part of a checkpoint to a ViT's own weights.

    The keys under ``prefix`` are taken with the prefix removed and
    checked for coverage (:func:`check_coverage`: every model key must be
    supplied except those matching ``allow_missing``); then, with
    ``adapt_shapes``, a ``pos_embed`` of another grid is resized
    (:func:`resize_pos_embed_to`) and a 1-channel
    ``patch_embed.projection.weight`` adapted (:func:`adapt_in_channels`).
    Any other shape difference is refused before anything is loaded.
    Checkpoint tensors the model has no place for are named at WARNING,
    and refused when dropping them changes what the backbone computes
    (:func:`~.dropped.check_dropped`: a layer scale that is not 1, a
    non-zero relative position table, another block weight).

    Args:
        state (dict): The checkpoint's state dict (all of it).
        target (dict): The model's ``state_dict()``, for names and shapes.
        model (str): The model's name, for messages.
        checkpoint (str): The checkpoint file, for messages.
        prefix (str): Prefix of the model's keys in ``state``. Defaults to
            ``'backbone.'``.
        allow_missing (Sequence[str]): ``fnmatch`` patterns of model keys
            that may be absent (new by design).
        allow_partial (bool): Accept a checkpoint lacking other keys too
            (counts logged at WARNING). Defaults to False.
        allow_dropped (bool): Load even when a dropped tensor changes what
            the backbone computes (said at WARNING). Defaults to False.
        adapt_shapes (bool): Adapt and check shapes here. False leaves them
            to the model's own load hooks (mmpretrain's ViT resizes its
            ``pos_embed`` itself). Defaults to True.
        keep_init (Sequence[str]): ``fnmatch`` patterns of model keys that
            keep the model's own initialisation although the file holds
            them (which part of a checkpoint matters: its position table,
            its blocks); each must match a model key. One string is one
            pattern. Defaults to ().

    Returns:
        tuple: The model's weights found in the checkpoint (dropped keys
        excluded) and a :class:`KeyReport`.

    Raises:
        ValueError: No key under ``prefix``; too few weights; a shape that
            cannot be adapted; a dropped tensor that changes the function;
            a ``keep_init`` pattern that matches no model key. Each message
            names the file and the key.
    """
    source = f'{checkpoint} (prefix {prefix!r})'
    own = strip_prefix(state, prefix)
    if not own:
        raise ValueError(f'{source}: no key starts with {prefix!r}; the file '
                         f'holds {describe_keys(state)}')
    expected = [k for k in target if not k.endswith('num_batches_tracked')]
    if isinstance(keep_init, str):  # one pattern, e.g. keep_init=pos_embed
        keep_init = (keep_init, )
    for pattern in keep_init:
        if not fnmatch.filter(expected, pattern):
            raise ValueError(
                f'{source}: keep_init pattern {pattern!r} matches no key of '
                f'the {model} (its keys: {describe_keys(expected)})')
    kept = [
        k for k in own
        if k in target and any(fnmatch.fnmatchcase(k, p) for p in keep_init)
    ]
    own = {k: v for k, v in own.items() if k not in kept}
    check_coverage(
        expected,
        own,
        model=model,
        source=source,
        file_keys=state,
        allow_missing=tuple(allow_missing) + tuple(keep_init),
        allow_partial=allow_partial)
    check_dropped({
        k: v
        for k, v in own.items() if k not in target
    },
                  model=model,
                  source=source,
                  allow_dropped=allow_dropped)
    report = KeyReport(
        prefix=prefix,
        ignored=[k for k in state if not k.startswith(prefix)],
        kept=kept)
    out = {}
    for key, value in own.items():
        if key not in target:
            report.dropped.append(key)
            continue
        want = target[key].shape
        if value.shape == want or not adapt_shapes:
            out[key] = value
            report.loaded.append(key)
            continue
        if (key == POS_EMBED and value.ndim == 3
                and value.shape[-1] == want[-1]):
            side = grid_side(want[1], key=f'the model\'s {key}')
            new = resize_pos_embed_to(value, (side, side), key=prefix + key)
        elif (key == PATCH_WEIGHT and value.shape[1] == 1
              and value.shape[0] == want[0] and value.shape[2:] == want[2:]):
            new = adapt_in_channels(value, want[1], key=prefix + key)
        else:
            raise ValueError(f'{source}: {prefix}{key}: checkpoint shape '
                             f'{tuple(value.shape)} does not fit the '
                             f"model's {tuple(want)}")
        out[key] = new.to(target[key].dtype)
        report.adapted.append(f'{key} {tuple(value.shape)} -> {tuple(want)}')
    report.new = [
        k for k in target if k not in out and k not in kept
        and not k.endswith('num_batches_tracked')
    ]
    return out, report
