from typing import Sequence, Tuple

import torch
import torch.nn.functional as F
from mmcv.cnn import ConvModule, build_norm_layer
from mmdet.registry import MODELS
from mmengine.model import BaseModule
from torch import nn


@MODELS.register_module()
class SimpleFPN(BaseModule):
    """ViTDet's simple feature pyramid from one stride-s map.

    Scales 4 and 2 come from 2x2 stride-2 transposed convolutions (two of
    them, LN + GELU between, for scale 4; channels C/4 and C/2), scale 1 is
    the map itself and scale 1/2 a 2x2 max-pool. Each level then gets a 1x1
    and a 3x3 convolution with norm, and the coarsest output is max-pooled
    once more (stride 2) for the extra top level.

    Args:
        backbone_channel (int): Channels C of the backbone map.
        in_channels (Sequence[int]): Channels of the four scales, i.e.
            (C/4, C/2, C, C).
        out_channels (int): Output channels of every level.
        num_outs (int): Output levels (4 pyramid levels + extra pooled ones).
        norm_cfg (dict): Norm after the convolutions (ViTDet: ``LN2d``).
        init_cfg (dict, optional): Initialisation config.
    """

    def __init__(self,
                 backbone_channel: int,
                 in_channels: Sequence[int],
                 out_channels: int,
                 num_outs: int,
                 norm_cfg: dict = dict(type='LN2d', eps=1e-6),
                 init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        C = backbone_channel
        expected = [C // 4, C // 2, C, C]
        if list(in_channels) != expected:
            raise ValueError(f'SimpleFPN: in_channels must be {expected} for '
                             f'backbone_channel={C}, got {list(in_channels)}')
        if num_outs < 4:
            raise ValueError(f'SimpleFPN: num_outs must be >= 4, got '
                             f'{num_outs}')
        self.num_outs = num_outs
        self.scale4 = nn.Sequential(
            nn.ConvTranspose2d(C, C // 2, 2, 2),
            build_norm_layer(norm_cfg, C // 2)[1], nn.GELU(),
            nn.ConvTranspose2d(C // 2, C // 4, 2, 2))
        self.scale2 = nn.ConvTranspose2d(C, C // 2, 2, 2)
        self.scale_half = nn.MaxPool2d(2, 2)
        self.lateral_convs = nn.ModuleList(
            ConvModule(c, out_channels, 1, norm_cfg=norm_cfg, act_cfg=None)
            for c in in_channels)
        self.fpn_convs = nn.ModuleList(
            ConvModule(
                out_channels,
                out_channels,
                3,
                padding=1,
                norm_cfg=norm_cfg,
                act_cfg=None) for _ in in_channels)

    def forward(self, inputs: Tuple[torch.Tensor]) -> Tuple[torch.Tensor]:
        x = inputs[-1]
        scales = [self.scale4(x), self.scale2(x), x, self.scale_half(x)]
        outs = [
            fpn(lateral(s)) for s, lateral, fpn in zip(
                scales, self.lateral_convs, self.fpn_convs)
        ]
        while len(outs) < self.num_outs:
            outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)
