"""The SiameseIM encoder interface, and the build-time check of a SiameseIM
model's parts against it.

A backbone implements the interface when it has:

``accepts_patch_mask = True``
    A class attribute declaring the ``forward`` below. (mmpretrain's
    ``MAEViT`` also has a ``forward(x, mask)``, but its ``mask`` is a flag
    that draws a random mask and it returns a tuple, so a signature alone
    cannot tell.)
``forward(x, mask=None)``
    ``x``: images (B, C, H, W). ``mask``: boolean patch mask (B, h * w) or
    (B, h, w), True = masked, the same number of masked patches in every
    sample; None encodes every patch. Returns one tensor
    (B, 1 + visible patches, embed_dims): the cls token first, then the
    visible patch tokens in row-major grid order, with their absolute
    position embedding added. The target branch calls it without a mask
    (on a smaller view, with the low-resolution target option).
``embed_dims``
    Token width (int); the neck's ``in_channels`` must equal it.
``patch_resolution``
    Patch grid (h, w) of a view at the configured image size; the neck's
    ``grid_size`` must equal it.
``patch_embed.projection``
    The patch-embedding convolution (mmpretrain's ``PatchEmbed``): its
    ``stride`` is the patch size and its ``in_channels`` the image
    channels, which the pixel target needs.

``SiameseIMViT`` implements it for mmpretrain's whole ``VisionTransformer``
family (every arch and the options that make sense for masked
pretraining).
"""
import inspect
from typing import Optional, Sequence, Tuple, Union

import torch.nn as nn
from mmpretrain.models.backbones import VisionTransformer

INTERFACE = ('the SiameseIM encoder interface (accepts_patch_mask = True, '
             'forward(x, mask) returning the cls token and the visible patch '
             'tokens, embed_dims, patch_resolution, patch_embed.projection; '
             'see mmsiameseim.models.utils.encoder_interface)')


def _pair(value: Union[int, Sequence[int]]) -> Tuple[int, int]:
    return (value, value) if isinstance(value, int) else tuple(value)


def check_masked_encoder(backbone: nn.Module) -> None:
    """Raise a TypeError naming the interface and what ``backbone`` lacks."""
    name = type(backbone).__name__
    missing = []
    if getattr(backbone, 'accepts_patch_mask', False) is not True:
        missing.append('accepts_patch_mask = True')
    params = list(inspect.signature(backbone.forward).parameters)
    if len(params) < 2 or params[1] != 'mask':
        missing.append('forward(x, mask)')
    if not isinstance(getattr(backbone, 'embed_dims', None), int):
        missing.append('embed_dims')
    if len(tuple(getattr(backbone, 'patch_resolution', ()))) != 2:
        missing.append('patch_resolution')
    projection = getattr(
        getattr(backbone, 'patch_embed', None), 'projection', None)
    if not hasattr(projection, 'stride'):
        missing.append('patch_embed.projection')
    if missing:
        hint = ''
        if isinstance(backbone, VisionTransformer):
            hint = (" For mmpretrain's ViT family use type='SiameseIMViT', "
                    'which takes the same arch and options.')
        raise TypeError(f'SiameseIM backbone {name} does not implement '
                        f'{INTERFACE}: it lacks {", ".join(missing)}.{hint}')


def check_siameseim_parts(backbone: nn.Module, neck: nn.Module,
                          head: nn.Module, target_type: str) -> None:
    """Check at build time that a SiameseIM model's parts fit together, so
    that a bad combination fails with the component and what it needs
    instead of a shape error at the first step.

    Args:
        backbone (nn.Module): Must implement the encoder interface.
        neck (nn.Module): Needs ``projector`` (averaged by the target
            branch), ``forward(x, mask, offsets)`` and ``in_channels``,
            ``grid_size``, ``embed_dims``, ``out_channels`` matching the
            backbone (e.g. ``RelPosDecoderNeck``).
        head (nn.Module): Needs ``loss(pred, target)``.
        target_type (str): 'feature' or 'pixel'.
    """
    check_masked_encoder(backbone)
    neck_name = type(neck).__name__
    needs = ('projector', 'in_channels', 'grid_size', 'embed_dims',
             'out_channels')
    lacks = [k for k in needs if not hasattr(neck, k)]
    params = list(inspect.signature(neck.forward).parameters)
    if params[:3] != ['x', 'mask', 'offsets']:
        lacks.append('forward(x, mask, offsets)')
    if lacks:
        raise TypeError(
            f'SiameseIM neck {neck_name} lacks {", ".join(lacks)}: it must '
            'project encoder tokens and predict view b from view a, as '
            'RelPosDecoderNeck does')
    if not callable(getattr(head, 'loss', None)):
        raise TypeError(f'SiameseIM head {type(head).__name__} has no '
                        'loss(pred, target), e.g. use UniGradHead')
    backbone_name = type(backbone).__name__
    if neck.in_channels != backbone.embed_dims:
        raise ValueError(
            f'SiameseIM: neck {neck_name} in_channels={neck.in_channels} '
            f'but backbone {backbone_name} gives embed_dims='
            f'{backbone.embed_dims} tokens; set neck.in_channels='
            f'{backbone.embed_dims}')
    grid = tuple(backbone.patch_resolution)
    if _pair(neck.grid_size) != grid:
        raise ValueError(
            f'SiameseIM: neck {neck_name} grid_size={neck.grid_size} but '
            f'backbone {backbone_name} has a {grid[0]}x{grid[1]} patch grid '
            '(img_size / patch_size); set neck.grid_size to match')
    expected: Optional[int] = neck.embed_dims
    what = 'the target features (neck.embed_dims)'
    if target_type == 'pixel':
        conv = backbone.patch_embed.projection
        expected = _pair(conv.stride)[0] * _pair(conv.stride)[1] * \
            conv.in_channels
        what = 'a pixel patch (patch_size**2 * in_channels)'
    if neck.out_channels != expected:
        raise ValueError(
            f'SiameseIM ({target_type} target): neck {neck_name} predicts '
            f'{neck.out_channels} channels, but {what} has {expected}; set '
            f'neck.out_channels={expected}')


def check_micro_batches(micro_batches: int, head: nn.Module) -> int:
    """``micro_batches`` when SiameseIM can split its batches exactly: a
    positive count and, above 1, a head whose loss takes a fixed
    correlation (``UniGradHead`` without 'moco-like' normalisation)."""
    if not isinstance(micro_batches, int) or micro_batches < 1:
        raise ValueError('SiameseIM micro_batches must be a positive integer, '
                         f'got {micro_batches!r}')
    if micro_batches == 1:
        return 1
    loss = getattr(head, 'loss_module', None)
    if not (hasattr(head, 'fixed_correlation')
            and getattr(loss, 'splits_exactly', False)):
        raise ValueError(
            f'SiameseIM micro_batches={micro_batches} needs a head whose '
            'loss can be split exactly (UniGradHead with UniGradLoss '
            f"target_norm 'mae-like' or 'none'); {type(head).__name__} with "
            f'{type(loss).__name__} '
            f"target_norm={getattr(loss, 'target_norm', None)!r} cannot: "
            "use optim_wrapper's accumulative_counts instead (inexact)")
    return micro_batches
