from typing import Optional

import torch
from mmengine.model import BaseModule
from mmpretrain.registry import MODELS


@MODELS.register_module()
class UniGradHead(BaseModule):
    """Head that scores dense predictions against target features with the
    UniGrad loss.

    Args:
        loss (dict): Loss config. Defaults to ``dict(type='UniGradLoss')``.
        init_cfg (dict, optional): Initialization config. Defaults to None.
    """

    def __init__(self,
                 loss: dict = dict(type='UniGradLoss'),
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(init_cfg=init_cfg)
        self.loss_module = MODELS.build(loss)

    def loss(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Scalar loss for predictions and targets of shape (B, N, C)."""
        if pred.shape != target.shape:
            raise ValueError(f'pred {tuple(pred.shape)} and target '
                             f'{tuple(target.shape)} must have the same shape')
        return self.loss_module(pred, target)
