"""Export the pretrained ViT of a checkpoint to mmpretrain or timm keys.

Accepted inputs:

- our checkpoints (mmengine ``{'state_dict': ...}``, or a bare state dict)
  whose ``backbone.*`` keys are an mmpretrain ``VisionTransformer``; every
  other key (``neck.*``, ``head.*``, ``target.*`` ...) is dropped;
- the authors' released checkpoint (``{'model': ...}`` with ``blocks.*``,
  ``mm_blocks.*``, ``decoder_*`` ...), first mapped to our keys by
  :func:`convert_official_state_dict`.

Anything else is refused with the keys at fault, and so is a backbone
whose weights hold NaN or inf (named tensor by tensor). The final norm:
SiameseIM pretrains without one (neither the authors' encoder nor ours has
it), so the output has none and the target model must be built without it
(mmpretrain ``final_norm=False``, timm ``final_norm=False``); a backbone
that does have one (``ln1``) exports it (timm ``norm``).
"""
import os
import os.path as osp
import re
from collections import OrderedDict
from typing import Any, Callable, Optional, Tuple, Union

from ..atomic_io import atomic_torch_save
from ..checkpoint import (check_finite, grid_side, group_keys,
                          read_checkpoint_state, strip_prefix)
from .official import REQUIRED as OFFICIAL_REQUIRED
from .official import convert_official_state_dict, official_key

# mmpretrain VisionTransformer key -> timm VisionTransformer key
_TOP_LEVEL = {
    'cls_token': 'cls_token',
    'pos_embed': 'pos_embed',
    'patch_embed.projection.weight': 'patch_embed.proj.weight',
    'patch_embed.projection.bias': 'patch_embed.proj.bias',
}
_FINAL_NORM = {
    'ln1.weight': 'norm.weight',
    'ln1.bias': 'norm.bias',
}
_PER_LAYER = {
    'ln1.weight': 'norm1.weight',
    'ln1.bias': 'norm1.bias',
    'attn.qkv.weight': 'attn.qkv.weight',
    'attn.qkv.bias': 'attn.qkv.bias',
    'attn.proj.weight': 'attn.proj.weight',
    'attn.proj.bias': 'attn.proj.bias',
    'ln2.weight': 'norm2.weight',
    'ln2.bias': 'norm2.bias',
    'ffn.layers.0.0.weight': 'mlp.fc1.weight',
    'ffn.layers.0.0.bias': 'mlp.fc1.bias',
    'ffn.layers.1.weight': 'mlp.fc2.weight',
    'ffn.layers.1.bias': 'mlp.fc2.bias',
}
_LAYER_KEY = re.compile(r'layers\.(\d+)\.(.+)')

Checkpoint = Union[str, dict]


def _short(keys, n=20) -> str:
    keys = sorted(keys)
    return str(
        keys[:n]) + (f' ... ({len(keys)} in all)' if len(keys) > n else '')


def load_pretrained_state(checkpoint: Checkpoint) -> Tuple[dict, dict]:
    """Read a checkpoint and bring it to our key names.

    The state dict is looked up by
    :func:`~mmsiameseim.checkpoint.read_checkpoint_state`: under
    ``'state_dict'``, then ``'model'``, then at the top level.

    Args:
        checkpoint (str | dict): Path, or an already loaded checkpoint.

    Returns:
        tuple: (state dict with our keys, report dict with ``source`` and,
        for official inputs, ``official_skipped``: official keys that have
        no counterpart in our format).

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not a checkpoint, or neither format.
    """
    at = f'{checkpoint}: ' if isinstance(checkpoint, str) else ''
    state = read_checkpoint_state(checkpoint).state_dict
    if any(k.startswith('backbone.') for k in state):
        return state, dict(source='mmsiameseim/mmpretrain (backbone.*)')
    if all(k in state for k in OFFICIAL_REQUIRED):
        ours, skipped = convert_official_state_dict(state)
        return ours, dict(
            source='official SiameseIM', official_skipped=skipped)
    raise ValueError(
        f'{at}unrecognised checkpoint: it has no backbone.* keys (an '
        'mmsiameseim or mmpretrain checkpoint) and lacks the official '
        f'SiameseIM keys {[k for k in OFFICIAL_REQUIRED if k not in state]}'
        f'; its keys are {_short(state)}')


def extract_vit_backbone(
    state: dict,
    key_name: Optional[Callable[[str],
                                str]] = None) -> Tuple['OrderedDict', dict]:
    """The ``backbone.*`` part of ``state`` as an mmpretrain ViT state dict.

    Args:
        state (dict): A state dict with our key names.
        key_name (callable, optional): Maps one of our ``backbone.*`` keys
            to the name the user's file gives it (e.g.
            :func:`~mmsiameseim.apis.official.official_key` for the authors'
            checkpoints), for the error message. Defaults to our names.

    Returns:
        tuple: (backbone state dict without the prefix, report with the
        ``dropped`` key count per top-level prefix and the ``arch`` read off
        the shapes).

    Raises:
        ValueError: The backbone is not a complete mmpretrain
            ``VisionTransformer`` (missing or unrecognised keys named).
    """
    backbone = OrderedDict(strip_prefix(state, 'backbone.'))
    dropped = group_keys(k for k in state if not k.startswith('backbone.'))
    layers = sorted({
        int(m.group(1))
        for k in backbone
        for m in [_LAYER_KEY.fullmatch(k)] if m
    })
    depth = max(layers) + 1 if layers else 0
    expected = set(_TOP_LEVEL) | {
        f'layers.{i}.{s}'
        for i in range(depth)
        for s in _PER_LAYER
    }
    optional = set(_FINAL_NORM)
    missing = sorted(expected - set(backbone))
    unknown = sorted(set(backbone) - expected - optional)
    if missing or unknown or not layers:
        name = key_name or (lambda k: k[9:])
        raise ValueError(
            'backbone.* is not an mmpretrain VisionTransformer: missing '
            f'{_short(name("backbone." + k) for k in missing)}, unrecognised '
            f'{_short(name("backbone." + k) for k in unknown)}, layer '
            f'indices {layers}')
    patch = backbone['patch_embed.projection.weight']
    grid = grid_side(backbone['pos_embed'].shape[1], key='backbone.pos_embed')
    arch = dict(
        embed_dims=int(patch.shape[0]),
        num_layers=len(layers),
        feedforward_channels=int(
            backbone['layers.0.ffn.layers.0.0.weight'].shape[0]),
        img_size=int(grid * patch.shape[2]),
        patch_size=int(patch.shape[2]),
        in_channels=int(patch.shape[1]),
        final_norm='ln1.weight' in backbone)
    return backbone, dict(dropped=dropped, arch=arch)


def _extract(state: dict, report: dict, checkpoint: Checkpoint):
    """:func:`extract_vit_backbone`, its errors naming the file and the keys
    as the file does (official names for the authors' checkpoints); weights
    holding NaN or inf are refused."""

    def official_name(key):
        return official_key(key, token_bn=False)

    official = report['source'] == 'official SiameseIM'
    try:
        backbone, info = extract_vit_backbone(
            state, official_name if official else None)
    except ValueError as e:
        if isinstance(checkpoint, str):
            raise ValueError(f'{checkpoint}: {e}') from e
        raise
    name = official_name if official else (lambda k: k)
    check_finite({
        name('backbone.' + k): v
        for k, v in backbone.items()
    }, checkpoint if isinstance(checkpoint, str) else 'the checkpoint')
    return backbone, info


def to_mmpretrain_backbone(checkpoint: Checkpoint) -> Tuple[dict, dict]:
    """Our or the official checkpoint -> mmpretrain ``VisionTransformer``.

    Keys keep the ``backbone.`` prefix, so the output loads with
    ``init_cfg=dict(type='Pretrained', checkpoint=OUT, prefix='backbone.')``
    and into an ``ImageClassifier`` (its head is not provided).

    Returns:
        tuple: (state dict, report).
    """
    state, report = load_pretrained_state(checkpoint)
    backbone, info = _extract(state, report, checkpoint)
    report.update(info)
    report['kept'] = len(backbone)
    report['renamed'] = 0
    report['not_provided'] = ['head.*'] + (
        [] if info['arch']['final_norm'] else ['backbone.ln1.* (final norm)'])
    return OrderedDict(
        ('backbone.' + k, v) for k, v in backbone.items()), report


def to_timm_vit(checkpoint: Checkpoint) -> Tuple[dict, dict]:
    """Our or the official checkpoint -> timm ``VisionTransformer`` keys
    (``vit_base_patch16_224`` for a ViT-B/16 at 224).

    Returns:
        tuple: (state dict, report).
    """
    state, report = load_pretrained_state(checkpoint)
    backbone, info = _extract(state, report, checkpoint)
    report.update(info)
    out = OrderedDict()
    for key, value in backbone.items():
        m = _LAYER_KEY.fullmatch(key)
        if m:
            out[f'blocks.{m.group(1)}.{_PER_LAYER[m.group(2)]}'] = value
        else:
            out[_TOP_LEVEL.get(key) or _FINAL_NORM[key]] = value
    report['kept'] = len(out)
    report['renamed'] = sum(a != b for a, b in zip(backbone, out))
    report['not_provided'] = ['head.*'] + ([] if info['arch']['final_norm']
                                           else ['norm.* (final norm)'])
    return out, report


def save_converted(obj: Any, src: str, dst: str) -> None:
    """Write a converter's output to ``dst``, atomically (a kill mid-write
    leaves no partial file under that name), creating its folder.

    Raises:
        ValueError: ``dst`` is the input file ``src`` itself, which the
            output would replace.
    """
    if osp.exists(dst) and osp.exists(src) and osp.samefile(src, dst):
        raise ValueError(f'{dst}: the output would replace the input '
                         'checkpoint; give another output path')
    os.makedirs(osp.dirname(osp.abspath(dst)), exist_ok=True)
    atomic_torch_save(obj, dst)


def format_report(report: dict) -> str:
    """Human-readable summary of a conversion report."""
    lines = [
        f"source: {report['source']}",
        f"kept {report['kept']} backbone tensors "
        f"({report['renamed']} renamed)"
    ]
    dropped = report.get('dropped', {})
    lines.append(f'dropped {sum(dropped.values())} tensors: ' +
                 (', '.join(f'{p}.* ({n})'
                            for p, n in sorted(dropped.items())) or 'none'))
    if report.get('official_skipped'):
        lines.append('official keys without a counterpart (not needed by '
                     f"the encoder): {report['official_skipped']}")
    lines.append(f"not provided: {', '.join(report['not_provided'])}")
    lines.append(f"architecture read off the shapes: {report['arch']}")
    return '\n'.join(lines)
