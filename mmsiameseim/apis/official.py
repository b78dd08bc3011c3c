"""Conversion between the authors' checkpoint format and ours.

The official ``SiameseIMViT`` (OpenGVLab/Siamese-Image-Modeling) stores the
online encoder as ``patch_embed/cls_token/pos_embed/blocks``, the projector
as ``decoder_embed/projector_decoder_blocks``, the predictor as
``mask_token/decoder_pos_mlp/predictor_decoder_blocks/decoder_pred`` and the
momentum target under ``mm_*``.
"""
import re
from collections import OrderedDict
from typing import Dict, Tuple, Union

import torch

from ..checkpoint import grid_side, read_checkpoint_state

# (official regex, our key template); applied in order, first match wins.
_BLOCK = [
    (r'norm1\.bn\.(.+)', r'ln1.\1'),
    (r'norm2\.bn\.(.+)', r'ln2.\1'),
    (r'norm1\.(.+)', r'ln1.\1'),
    (r'norm2\.(.+)', r'ln2.\1'),
    (r'attn\.(qkv|proj)\.(.+)', r'attn.\1.\2'),
    (r'mlp\.fc1\.(.+)', r'ffn.layers.0.0.\1'),
    (r'mlp\.fc2\.(.+)', r'ffn.layers.1.\1'),
]
_PREFIXES = [
    ('blocks', 'backbone.layers'),
    ('mm_blocks', 'target.module.backbone.layers'),
    ('projector_decoder_blocks', 'neck.projector.blocks'),
    ('mm_projector_decoder_blocks', 'target.module.projector.blocks'),
    ('predictor_decoder_blocks', 'neck.predictor_blocks'),
]
_PLAIN = {
    'cls_token': 'backbone.cls_token',
    'pos_embed': 'backbone.pos_embed',
    'patch_embed.proj.weight': 'backbone.patch_embed.projection.weight',
    'patch_embed.proj.bias': 'backbone.patch_embed.projection.bias',
    'norm.weight': 'backbone.ln1.weight',
    'norm.bias': 'backbone.ln1.bias',
    'decoder_embed.weight': 'neck.projector.embed.weight',
    'decoder_embed.bias': 'neck.projector.embed.bias',
    'mask_token': 'neck.mask_token',
    'decoder_pos_mlp.weight': 'neck.pos_mlp.weight',
    'decoder_pos_mlp.bias': 'neck.pos_mlp.bias',
    'decoder_pred.weight': 'neck.pred.weight',
    'decoder_pred.bias': 'neck.pred.bias',
    'mm_cls_token': 'target.module.backbone.cls_token',
    'mm_patch_embed.proj.weight':
    'target.module.backbone.patch_embed.projection.weight',
    'mm_patch_embed.proj.bias':
    'target.module.backbone.patch_embed.projection.bias',
    'mm_decoder_embed.weight': 'target.module.projector.embed.weight',
    'mm_decoder_embed.bias': 'target.module.projector.embed.bias',
}
# Present in official checkpoints but not needed: the decoder position
# embedding is a fixed sin-cos table we rebuild (and compare); the momentum
# mask token is updated by the authors but never used in their forward.
_RECOMPUTED = ('decoder_pos_embed', )
_UNUSED = ('mm_mask_token', )
REQUIRED = ('cls_token', 'pos_embed', 'patch_embed.proj.weight',
            'decoder_embed.weight', 'decoder_pos_mlp.weight',
            'decoder_pred.weight', 'mm_cls_token',
            'mm_patch_embed.proj.weight')


def load_official_state_dict(
    checkpoint: Union[str, Dict[str,
                                torch.Tensor]]) -> Dict[str, torch.Tensor]:
    """Read an official checkpoint (path or dict; the state dict looked up
    as :func:`~mmsiameseim.checkpoint.read_checkpoint_state` does: under
    ``'state_dict'``, then ``'model'`` (the authors' ``{'model': ...}``),
    then at the top level).

    Raises:
        FileNotFoundError: No such file.
        ValueError: Not a checkpoint, or not the official format; the
            message names the file (for a path), the official keys it lacks
            and the keys it has.
    """
    at = f'{checkpoint}: ' if isinstance(checkpoint, str) else ''
    state = read_checkpoint_state(checkpoint).state_dict
    missing = [k for k in REQUIRED if k not in state]
    if missing:
        raise ValueError(
            f'{at}not an official SiameseIM checkpoint: missing keys '
            f'{missing}; its keys are {sorted(state)[:40]}'
            f'{" ..." if len(state) > 40 else ""}')
    return state


def _block_ids(state: Dict[str, torch.Tensor], prefix: str) -> list:
    return sorted({
        int(m.group(1))
        for k in state
        for m in [re.match(rf'{prefix}\.(\d+)\.', k)] if m
    })


def _count_blocks(state: Dict[str, torch.Tensor], prefix: str) -> int:
    """Number of ``prefix.N.*`` blocks; they must be numbered 0..N-1."""
    ids = _block_ids(state, prefix)
    if ids != list(range(len(ids))):
        absent = sorted(set(range(max(ids) + 1)) - set(ids))
        raise ValueError(f'{prefix}: blocks {ids} are not numbered 0..'
                         f'{max(ids)}: no {prefix}.N.* keys for N in '
                         f'{absent}')
    return len(ids)


def _need(state: Dict[str, torch.Tensor], key: str) -> torch.Tensor:
    if key not in state:
        raise ValueError(f'official key {key!r} is missing (needed to read '
                         'the architecture off the weights)')
    return state[key]


def infer_official_arch(state: Dict[str, torch.Tensor]) -> dict:
    """Architecture of an official checkpoint, read off its tensor shapes."""
    patch_w = _need(state, 'patch_embed.proj.weight')
    embed_dims, in_channels, patch_size = patch_w.shape[:3]
    grid = grid_side(_need(state, 'pos_embed').shape[1])
    return dict(
        embed_dims=int(embed_dims),
        in_channels=int(in_channels),
        patch_size=int(patch_size),
        img_size=int(grid * patch_size),
        grid_size=grid,
        depth=_count_blocks(state, 'blocks'),
        mlp_ratio=_need(state, 'blocks.0.mlp.fc1.weight').shape[0] /
        embed_dims,
        final_norm='norm.weight' in state,
        decoder_embed_dims=int(_need(state, 'decoder_embed.weight').shape[0]),
        projector_depth=_count_blocks(state, 'projector_decoder_blocks'),
        predictor_depth=_count_blocks(state, 'predictor_decoder_blocks'),
        decoder_norm='TokenBN' if any('.bn.' in k for k in state) else 'LN')


def our_key(key: str) -> Union[str, None]:
    """Our name of an official key; None for keys we do not load."""
    new = _PLAIN.get(key)
    if new is not None:
        return new
    for src, dst in _PREFIXES:
        m = re.match(rf'{src}\.(\d+)\.(.+)', key)
        if m:
            for pat, rep in _BLOCK:
                if re.fullmatch(pat, m.group(2)):
                    return f'{dst}.{m.group(1)}.' + re.sub(
                        pat, rep, m.group(2))
            return None
    return None


def official_key(ours: str, token_bn: bool) -> str:
    """The official name of one of our keys (inverse of :func:`our_key`),
    to report a key the user's checkpoint lacks in its own naming.

    Args:
        ours: Our key, e.g. ``'backbone.layers.1.ln1.weight'``.
        token_bn: Whether the checkpoint's projector/predictor blocks use
            BatchNorm (their norms are then ``normN.bn.*``).
    """
    for official, mine in _PLAIN.items():
        if mine == ours:
            return official
    if ours == 'target.module.backbone.pos_embed':
        return 'pos_embed'  # the authors' target shares it
    for src, dst in _PREFIXES:
        m = re.fullmatch(rf'{re.escape(dst)}\.(\d+)\.(.+)', ours)
        if not m:
            continue
        rest = m.group(2)
        bn = '.bn' if token_bn and 'decoder' in src else ''
        for mine, official in ((r'ln1\.(.+)', rf'norm1{bn}.\1'),
                               (r'ln2\.(.+)', rf'norm2{bn}.\1'),
                               (r'ffn\.layers\.0\.0\.(.+)', r'mlp.fc1.\1'),
                               (r'ffn\.layers\.1\.(.+)', r'mlp.fc2.\1')):
            if re.fullmatch(mine, rest):
                rest = re.sub(mine, official, rest)
                break
        return f'{src}.{m.group(1)}.{rest}'
    return ours


def convert_official_state_dict(
    state: Dict[str, torch.Tensor]
) -> Tuple['OrderedDict[str, torch.Tensor]', list]:
    """Map official keys to ours.

    Returns:
        tuple: (converted state dict, list of official keys not loaded).
    """
    out, skipped = OrderedDict(), []
    for key, value in state.items():
        new = our_key(key)
        if new is None:
            skipped.append(key)
            continue
        out[new] = value
    # The authors' target shares the online (fixed) position embedding.
    out['target.module.backbone.pos_embed'] = state['pos_embed']
    return out, skipped
