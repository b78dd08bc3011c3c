import torch
import torch.nn.functional as F
from mmdet.registry import MODELS
from torch import nn


@MODELS.register_module()
class LN2d(nn.LayerNorm):
    """LayerNorm over the channels of an (N, C, H, W) map, as ViTDet uses.

    mmdet and mmcv ship no channels-first LayerNorm (mmpretrain's ``LN2d``
    lives in mmpretrain's registry, invisible from mmdet's scope), so this one
    is registered in mmdet's ``MODELS`` for ``norm_cfg=dict(type='LN2d')``.

    Args:
        num_channels (int): Number of channels C.
        eps (float): Added to the variance. Defaults to 1e-6.
    """

    def __init__(self, num_channels: int, eps: float = 1e-6, **kwargs):
        super().__init__(num_channels, eps=eps, **kwargs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias,
                         self.eps)
        return x.permute(0, 3, 1, 2)
