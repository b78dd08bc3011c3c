"""Map a SiameseIM pretraining checkpoint onto mmseg's ``MAE`` backbone."""
import math
from typing import Dict, List, Tuple

import torch
from mmseg.models.backbones.vit import VisionTransformer as MMSegViT

from ..models.utils.checkpoint_coverage import check_coverage, describe_keys

# Keys that only mmseg's MAE has; they keep the model's own initialisation
# (layer scale = ``init_values``, relative position bias = zeros, as MAE).
_MAE_ONLY = ('gamma_1', 'gamma_2', 'relative_position_bias_table',
             'relative_position_index')
# ... as patterns of their keys, with MAE's final norm (SiameseIM
# pretrains without one): every other backbone weight must be supplied.
_MAY_BE_NEW = tuple(f'*.{name}' for name in _MAE_ONLY) + ('ln1.*', )


def _grid(num_tokens: int, key: str) -> int:
    side = math.isqrt(num_tokens - 1)
    if side * side != num_tokens - 1:
        raise ValueError(f'{key}: {num_tokens} tokens is not 1 cls token '
                         'plus a square grid')
    return side


def siameseim_to_mmseg_mae(
    state_dict: Dict[str, torch.Tensor],
    target: Dict[str, torch.Tensor],
    prefix: str = 'backbone.',
    source: str = 'the checkpoint',
    allow_partial: bool = False,
) -> Tuple[Dict[str, torch.Tensor], Dict[str, List[str]]]:
    """Convert the ``prefix`` weights of a SiameseIM checkpoint for ``MAE``.

    Our backbone keys (mmpretrain ``VisionTransformer`` names) are mmseg
    ``MAE`` names already: ``patch_embed.projection``, ``cls_token``,
    ``pos_embed``, ``layers.N.{ln1,attn.qkv,attn.proj,ln2,ffn.layers.*}``,
    ``ln1`` (final norm). Besides stripping ``prefix``, two tensors may need
    adapting to ``target`` (the MAE's own ``state_dict()``):

    - ``pos_embed``: the patch grid is resized bicubically (cls position kept),
      e.g. 14x14 of 224 px pretraining to 32x32 of 512 px crops.
    - ``patch_embed.projection.weight`` from 1 input channel (grayscale
      pretraining) to 3: repeated and divided by 3, so a gray RGB image gives
      exactly the grayscale response.

    Args:
        state_dict: The checkpoint's state dict (all of it).
        target: The MAE backbone's ``state_dict()``, for names and shapes.
        prefix: Prefix of the backbone keys in ``state_dict``.
        source: The checkpoint file, for messages.
        allow_partial: Accept a checkpoint that lacks backbone weights
            besides the MAE-only ones (they keep the model's
            initialisation; counts logged at WARNING). Defaults to False.

    Returns:
        The converted state dict and a report with the key lists ``loaded``
        (copied as they are), ``adapted`` (resized or channel-adapted, as
        ``'key (old shape) -> (new shape)'``),
        ``new`` (target keys absent from the checkpoint: they keep the model's
        initialisation), ``dropped`` (backbone keys the target has no place
        for, e.g. a final norm when ``final_norm=False``) and ``ignored``
        (checkpoint keys outside ``prefix``: neck, head, momentum target).

    Raises:
        ValueError: no ``prefix`` keys; a backbone weight other than the
            MAE-only ones (layer scale, relative position bias, final norm)
            missing, e.g. a ResNet or a shallower ViT (the message names the
            missing keys and what the file holds); or a tensor whose shape
            cannot be adapted (the message names the key and both shapes).
    """
    backbone = {k[len(prefix):]: v for k, v in state_dict.items()
                if k.startswith(prefix)}
    if not backbone:
        raise ValueError(f'{source}: no "{prefix}*" keys; the file holds '
                         f'{describe_keys(state_dict)}')
    check_coverage(list(target), [k for k in backbone if k in target],
                   model='mmseg MAE', source=f'{source} (prefix {prefix!r})',
                   file_keys=state_dict, allow_missing=_MAY_BE_NEW,
                   allow_partial=allow_partial)
    report = dict(loaded=[], adapted=[], new=[], dropped=[],
                  ignored=[k for k in state_dict if not k.startswith(prefix)])
    converted = {}
    for key, value in backbone.items():
        if key not in target:
            report['dropped'].append(key)
            continue
        want = target[key].shape
        if value.shape == want:
            converted[key] = value
            report['loaded'].append(key)
            continue
        if key == 'pos_embed' and value.shape[-1] == want[-1]:
            src, dst = _grid(value.shape[1], key), _grid(want[1], key)
            value = MMSegViT.resize_pos_embed(value.float(), (dst, dst),
                                              (src, src), 'bicubic')
        elif (key == 'patch_embed.projection.weight' and value.shape[1] == 1
              and value.shape[2:] == want[2:] and value.shape[0] == want[0]):
            value = value.repeat(1, want[1], 1, 1) / want[1]
        else:
            raise ValueError(f'{source}: {prefix}{key}: checkpoint shape '
                             f'{tuple(value.shape)} does not fit the model\'s '
                             f'{tuple(want)}')
        converted[key] = value.to(target[key].dtype)
        report['adapted'].append(
            f'{key} {tuple(backbone[key].shape)} -> {tuple(want)}')
    report['new'] = [k for k in target if k not in converted]
    return converted, report


def format_report(report: Dict[str, List[str]], source: str = '') -> str:
    """A readable summary of :func:`siameseim_to_mmseg_mae`'s report."""
    lines = [f'SiameseIM -> mmseg MAE {source}: '
             f'{len(report["loaded"])} loaded, {len(report["adapted"])} '
             f'adapted, {len(report["new"])} new (model init), '
             f'{len(report["dropped"])} dropped, {len(report["ignored"])} '
             'ignored (not backbone)']
    for name in ('adapted', 'dropped'):
        for key in report[name]:
            lines.append(f'  {name}: {key}')
    kinds = {}
    for key in report['new']:
        kinds.setdefault(key.split('.')[-1], []).append(key)
    for kind, keys in kinds.items():
        lines.append(f'  new: {len(keys)} x {kind} (e.g. {keys[0]})')
    return '\n'.join(lines)
