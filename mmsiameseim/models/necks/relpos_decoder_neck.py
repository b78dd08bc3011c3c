"""SiameseIM's neck: the projector and the predictor with the relative
position embedding (:class:`RelPosDecoderNeck`), and the token BatchNorm of
the recipe (:class:`TokenBatchNorm`, registered as ``TokenBN``)."""
from typing import Optional, Sequence, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.dist import get_world_size
from mmengine.model import BaseModule, ModuleList
from mmpretrain.models.backbones.vision_transformer import \
    TransformerEncoderLayer
from mmpretrain.registry import MODELS
from torch.distributed.nn.functional import all_reduce

from ..backbones.siameseim_vit import (drop_zero_drop_paths, run_blocks,
                                       use_fp32_attention_under_cpu_autocast)
from ..utils.geometry import (CropPairOffsets, build_rows_first_sincos_embed,
                              relative_sincos_embed)


def _blocks(depth: int, dims: int, num_heads: int, mlp_ratio: float,
            norm_cfg: dict) -> ModuleList:
    return drop_zero_drop_paths(
        use_fp32_attention_under_cpu_autocast(
            ModuleList([
                TransformerEncoderLayer(
                    embed_dims=dims,
                    num_heads=num_heads,
                    feedforward_channels=int(dims * mlp_ratio),
                    qkv_bias=True,
                    norm_cfg=norm_cfg) for _ in range(depth)
            ])))


def check_decoder_settings(embed_dims: int, projector_depth: int,
                           predictor_depth: int, num_heads: int,
                           mlp_ratio: float) -> None:
    """Refuse neck settings that would train an encoder that never learns or
    fail only at the first step, naming the option and its valid range.

    With no predictor block, view b's queries never attend to the encoder's
    tokens: the encoder and projector get an identically zero gradient while
    the loss still falls.
    """
    for name, value, low in (('predictor_depth', predictor_depth,
                              1), ('projector_depth', projector_depth, 0),
                             ('num_heads', num_heads, 1), ('embed_dims',
                                                           embed_dims, 1)):
        if isinstance(value, bool) or not isinstance(value, int) \
                or value < low:
            why = (' (with no predictor block the encoder gets no gradient)'
                   if name == 'predictor_depth' else '')
            raise ValueError(f'RelPosDecoderNeck: neck.{name}={value!r}, '
                             f'must be an int >= {low}{why}')
    if embed_dims % num_heads:
        raise ValueError(
            f'RelPosDecoderNeck: neck.embed_dims={embed_dims} is not '
            f'divisible by neck.num_heads={num_heads}; choose a head count '
            'that divides the width (e.g. 64-wide heads)')
    if not mlp_ratio > 0:
        raise ValueError(
            f'RelPosDecoderNeck: neck.mlp_ratio={mlp_ratio!r}, must be > 0')


class SiameseIMProjector(BaseModule):
    """Projector: Linear then Transformer blocks. Shared by the online branch
    and (as a momentum copy) the target branch."""

    def __init__(self, in_channels: int, embed_dims: int, depth: int,
                 num_heads: int, mlp_ratio: float, norm_cfg: dict) -> None:
        super().__init__()
        self.embed = nn.Linear(in_channels, embed_dims)
        self.blocks = _blocks(depth, embed_dims, num_heads, mlp_ratio,
                              norm_cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return run_blocks(self.blocks, self.embed(x), with_cp=False)


@MODELS.register_module()
class RelPosDecoderNeck(BaseModule):
    """SiameseIM projector + predictor with relative position embedding.

    ``project`` maps encoder tokens into the decoder space. ``predict`` builds
    ``[cls + 0, visible tokens of view a + their position embedding,
    mask tokens + p_b]`` and runs the predictor; the last ``N_b`` outputs
    predict the target features of view b, where p_b encodes where each
    patch of view b lies in view a (crop offsets, scale, flip).

    Args:
        in_channels (int): Encoder width. Defaults to 768.
        embed_dims (int): Decoder width. Defaults to 768.
        grid_size (int | tuple): Patch grid of view a. Defaults to 14.
        target_grid_size (int | tuple, optional): Patch grid of view b when it
            is encoded at a lower resolution. Defaults to None (same grid).
        projector_depth (int): Projector blocks, >= 0. Defaults to 2.
        predictor_depth (int): Predictor blocks, >= 1 (without one the
            encoder gets no gradient). Defaults to 4.
        num_heads (int): Heads of every decoder block, dividing
            ``embed_dims`` (the released ViT-B weights use 16). Defaults to
            16.
        mlp_ratio (float): MLP ratio, > 0. Defaults to 4.
        out_channels (int, optional): Width of each prediction: the target
            feature width, or ``patch_size**2 * C`` for pixel targets.
            Defaults to None (``embed_dims``).
        norm_cfg (dict): Norm of the projector and predictor blocks:
            ``dict(type='TokenBN')`` (authors, synced across ranks; pass
            ``sync=False`` to turn syncing off) or
            ``dict(type='LN', eps=1e-6)`` (ablation). Defaults to
            ``dict(type='TokenBN')``.
        init_cfg (dict, optional): Initialization config. Defaults to None.
    """

    def __init__(self,
                 in_channels: int = 768,
                 embed_dims: int = 768,
                 grid_size: Union[int, Sequence[int]] = 14,
                 target_grid_size: Optional[Union[int, Sequence[int]]] = None,
                 projector_depth: int = 2,
                 predictor_depth: int = 4,
                 num_heads: int = 16,
                 mlp_ratio: float = 4.,
                 out_channels: Optional[int] = None,
                 norm_cfg: dict = dict(type='TokenBN'),
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(init_cfg=init_cfg)
        check_decoder_settings(embed_dims, projector_depth, predictor_depth,
                               num_heads, mlp_ratio)
        self.in_channels = in_channels
        self.embed_dims = embed_dims
        self.out_channels = out_channels or embed_dims
        self.grid_size = grid_size
        self.target_grid_size = target_grid_size
        self.projector = SiameseIMProjector(in_channels, embed_dims,
                                            projector_depth, num_heads,
                                            mlp_ratio, norm_cfg)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, embed_dims))
        self.register_buffer(
            'decoder_pos_embed',
            build_rows_first_sincos_embed(grid_size, embed_dims),
            persistent=False)
        self.pos_mlp = nn.Linear(2 * embed_dims, embed_dims)
        self.predictor_blocks = _blocks(predictor_depth, embed_dims, num_heads,
                                        mlp_ratio, norm_cfg)
        self.pred = nn.Linear(embed_dims, self.out_channels)
        #: recompute the predictor's activations in backward
        self.with_cp = False

    def init_weights(self) -> None:
        super().init_weights()
        nn.init.normal_(self.mask_token, std=.02)

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """Encoder tokens (B, 1 + L, C_in) -> decoder space (B, 1 + L, D)."""
        return self.projector(x)

    def predict(self, x: torch.Tensor, mask: torch.Tensor,
                offsets: CropPairOffsets) -> torch.Tensor:
        """Predict view b's target features.

        Args:
            x (Tensor): Projected tokens of view a (B, 1 + visible, D).
            mask (Tensor): Boolean patch mask of view a, True = masked.
            offsets (CropPairOffsets): Where view b's crop lies relative to
                view a's (``crop_pair_offsets``).

        Returns:
            Tensor: Predictions (B, N_b, out_channels) for the patches of
            view b.
        """
        B = x.shape[0]
        pos = self.decoder_pos_embed
        keep = ~mask.reshape(B, -1)
        vis_pos = pos[:, 1:].expand(B, -1,
                                    -1)[keep].reshape(B, -1, pos.shape[-1])
        rel = relative_sincos_embed(offsets, self.grid_size, self.embed_dims,
                                    self.target_grid_size)
        rel = self.pos_mlp(rel)
        queries = self.mask_token + rel
        x = torch.cat([x[:, :1] + pos[:, :1], x[:, 1:] + vis_pos, queries],
                      dim=1)
        x = run_blocks(self.predictor_blocks, x, self.with_cp
                       and self.training)
        return self.pred(x[:, -queries.shape[1]:])

    def forward(self, x: torch.Tensor, mask: torch.Tensor,
                offsets: CropPairOffsets) -> torch.Tensor:
        return self.predict(self.project(x), mask, offsets)


@MODELS.register_module(name=['TokenBN', 'TokenBatchNorm'])
class TokenBatchNorm(nn.BatchNorm1d):
    """BatchNorm over all tokens of a batch, in fp32, synced across ranks.

    Normalises (..., C) token features with statistics taken over every
    leading dimension (batch and tokens together), as the authors' projector
    and predictor do. It always runs in fp32 with autocast off.

    When ``torch.distributed`` is initialised with more than one rank, the
    statistics are all-reduced in training mode on any backend (gloo
    included; ``torch.nn.SyncBatchNorm`` refuses CPU tensors). The all-reduce
    is autograd-aware, so gradients flow to every rank's inputs exactly as
    for one process on the whole batch.

    Args:
        num_features (int): Channels C.
        eps (float): Added to the variance. Defaults to 1e-5.
        momentum (float): Running-statistics momentum. Defaults to 0.1.
        sync (bool): Synchronise statistics across ranks when distributed.
            Defaults to True.
    """

    def __init__(self,
                 num_features: int,
                 eps: float = 1e-5,
                 momentum: float = 0.1,
                 sync: bool = True) -> None:
        super().__init__(num_features, eps=eps, momentum=momentum)
        self.sync = sync

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        with torch.autocast(device_type=x.device.type, enabled=False):
            flat = x.reshape(-1, shape[-1]).float()
            if self.training and self.sync and get_world_size() > 1:
                out = self._synced_batch_norm(flat)
            else:
                out = F.batch_norm(flat, self.running_mean, self.running_var,
                                   self.weight, self.bias, self.training,
                                   self.momentum, self.eps)
        return out.reshape(shape)

    def _synced_batch_norm(self, x: torch.Tensor) -> torch.Tensor:
        count = x.new_tensor([x.shape[0]])
        total = all_reduce(torch.cat([x.sum(0), count]))
        n = total[-1]
        mean = total[:-1] / n
        centered = x - mean
        var = all_reduce(centered.pow(2).sum(0)) / n
        with torch.no_grad():
            self.num_batches_tracked.add_(1)
            unbiased = var * (n / (n - 1).clamp(min=1))
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(unbiased, self.momentum)
        return centered * torch.rsqrt(var + self.eps) * self.weight + self.bias
