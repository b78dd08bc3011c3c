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
        loss_type (str): 'dense' (every token is a sample, the authors'
            default) or 'global' (the loss on the token-averaged prediction
            and target, one sample per image, as in the paper's ablation
            row (j)). Defaults to 'dense'.
        init_cfg (dict, optional): Initialization config. Defaults to None.
    """

    def __init__(self,
                 loss: dict = dict(type='UniGradLoss'),
                 loss_type: str = 'dense',
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(init_cfg=init_cfg)
        if loss_type not in ('dense', 'global'):
            raise ValueError("loss_type must be 'dense' or 'global', got "
                             f'{loss_type!r}')
        self.loss_type = loss_type
        self.loss_module = MODELS.build(loss)

    def loss(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Scalar loss for predictions and targets of shape (B, N, C)."""
        if pred.shape != target.shape:
            raise ValueError(f'pred {tuple(pred.shape)} and target '
                             f'{tuple(target.shape)} must have the same shape')
        if self.loss_type == 'global':
            pred, target = pred.mean(dim=1), target.mean(dim=1)
        return self.loss_module(pred, target)
