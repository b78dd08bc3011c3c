from typing import Dict, Union

import torch
from mmengine.logging import print_log
from mmpretrain.registry import MODELS

from ..checkpoint import init_weights_quietly
from ..checkpoint.finite import check_finite
from .official import (_RECOMPUTED, _UNUSED, convert_official_state_dict,
                       infer_official_arch, load_official_state_dict,
                       official_key, our_key)


def siameseim_cfg_from_official_arch(arch: dict, num_heads: int,
                                     decoder_num_heads: int,
                                     **overrides) -> dict:
    """A ``SiameseIM`` model config matching an official checkpoint."""
    norm = dict(type='TokenBN') if arch['decoder_norm'] == 'TokenBN' else \
        dict(type='LN', eps=1e-6)
    embed = arch['embed_dims']
    cfg = dict(
        type='SiameseIM',
        backbone=dict(
            type='SiameseIMViT',
            arch=dict(
                embed_dims=embed,
                num_layers=arch['depth'],
                num_heads=num_heads,
                feedforward_channels=int(embed * arch['mlp_ratio'])),
            img_size=arch['img_size'],
            patch_size=arch['patch_size'],
            in_channels=arch['in_channels'],
            final_norm=arch['final_norm']),
        neck=dict(
            type='RelPosDecoderNeck',
            in_channels=embed,
            embed_dims=arch['decoder_embed_dims'],
            grid_size=arch['grid_size'],
            projector_depth=arch['projector_depth'],
            predictor_depth=arch['predictor_depth'],
            num_heads=decoder_num_heads,
            mlp_ratio=arch['mlp_ratio'],
            norm_cfg=norm),
        head=dict(type='UniGradHead', loss=dict(type='UniGradLoss')))
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    return cfg


def build_from_official(checkpoint: Union[str, Dict[str, torch.Tensor]],
                        num_heads: int, decoder_num_heads: int,
                        **overrides) -> torch.nn.Module:
    """Build a ``SiameseIM`` from the authors' checkpoint, target included.

    The architecture (widths, depths, patch and image size) is read off the
    weights; head counts cannot be and must be given (the released ViT-B
    uses 12 encoder and 16 decoder heads).

    Args:
        checkpoint (str | dict): Path or state dict in the official format,
            optionally under a ``'model'`` key.
        num_heads (int): Encoder heads.
        decoder_num_heads (int): Projector/predictor heads.
        **overrides: Merged into the model config (e.g.
            ``head=dict(loss=dict(lambda_neg=0.05))``).

    Raises:
        ValueError: Not the official format, shapes that do not fit, or
            weights holding NaN or inf; the message names the file (for a
            path) and the keys as the file names them.

    Returns:
        SiameseIM: In training mode, ready to continue training: its next
        step applies a real momentum update to the loaded target.
    """
    # errors name the file (given a path) and keys as the file does
    at = f'{checkpoint}: ' if isinstance(checkpoint, str) else ''
    state = load_official_state_dict(checkpoint)
    check_finite(
        state, checkpoint
        if isinstance(checkpoint, str) else 'the official checkpoint')
    try:
        arch = infer_official_arch(state)
    except ValueError as e:
        raise ValueError(f'{at}{e}') from e
    model = MODELS.build(
        siameseim_cfg_from_official_arch(arch, num_heads, decoder_num_heads,
                                         **overrides))
    init_weights_quietly(model)
    converted, skipped = convert_official_state_dict(state)
    origin = {our_key(k): k for k in state if our_key(k)}
    origin['target.module.backbone.pos_embed'] = 'pos_embed'
    token_bn = arch['decoder_norm'] == 'TokenBN'
    unknown = [k for k in skipped if k not in _RECOMPUTED + _UNUSED]
    ours = model.state_dict()
    non_persistent = {'target.steps'}
    missing = sorted(
        official_key(k, token_bn)
        for k in set(ours) - set(converted) - non_persistent)
    unexpected = sorted([origin[k]
                         for k in set(converted) - set(ours)] + unknown)
    if missing or unexpected:
        found = [f'it lacks the official keys {missing}'] if missing else []
        found += [f'it has keys SiameseIM has no place for: {unexpected}'
                  ] if unexpected else []
        raise ValueError(
            f'{at}the official checkpoint does not match the SiameseIM '
            f'its shapes describe ({arch}): ' + '; '.join(found))
    wrong = [
        f'{origin[key]}: checkpoint shape {tuple(value.shape)}, '
        f'expected {tuple(ours[key].shape)}'
        for key, value in converted.items() if ours[key].shape != value.shape
    ]
    if wrong:
        raise ValueError(f'{at}tensors of the wrong shape for the '
                         f'SiameseIM its other shapes describe: {wrong}')
    model.load_state_dict(converted, strict=False)
    if 'decoder_pos_embed' in state:
        ref = state['decoder_pos_embed'].to(model.neck.decoder_pos_embed)
        if not torch.allclose(ref, model.neck.decoder_pos_embed, atol=1e-5):
            raise ValueError(f'{at}decoder_pos_embed is not the '
                             'rows-first sin-cos table this model rebuilds')
    print_log(
        f'built SiameseIM from an official checkpoint: {len(converted)} '
        f'tensors loaded, recomputed {list(_RECOMPUTED)}, dropped unused '
        f'{[k for k in skipped if k in _UNUSED]}',
        logger='current')
    return model.train()
