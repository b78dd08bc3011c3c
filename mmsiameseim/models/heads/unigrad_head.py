"""The head that scores predictions against target features with the
UniGrad loss (:class:`~mmsiameseim.models.losses.UniGradLoss`)."""
from typing import Dict, Optional

import torch
from mmengine.model import BaseModule
from mmpretrain.registry import MODELS


@MODELS.register_module()
class UniGradHead(BaseModule):
    """Head that scores predictions against target features with the UniGrad
    loss.

    A drop-in ``head`` for SiameseIM and for mmpretrain's global-feature
    algorithms: ``MoCoV3`` calls ``head.loss(q, k)`` and ``BYOL``/``SimSiam``
    call ``head.loss(online, target)`` on (B, C) embeddings, and add the
    returned scalar tensors. Give those algorithms a ``predictor`` (the
    ``NonLinearNeck`` their own heads carry); SiameseIM predicts in its neck
    and needs none.

    Inputs are (B, N, C) token features or (B, C) embeddings:

    - 'dense': every token (or every row of a (B, C) input) is a sample.
    - 'global': one sample per image: (B, N, C) inputs are averaged over the
      N tokens first, (B, C) inputs are used as they are (rows = images).

    Args:
        loss (dict): Loss config. Defaults to ``dict(type='UniGradLoss')``.
        loss_type (str): 'dense' (the authors' default) or 'global' (the
            paper's ablation row (j), and the loss for (B, C) embeddings).
            Defaults to 'dense'.
        predictor (dict, optional): Neck applied to the prediction input
            first, e.g. ``dict(type='NonLinearNeck', ...)``, which takes and
            returns a tuple as in mmpretrain's ``LatentPredictHead``.
            Defaults to None (no predictor).
        init_cfg (dict, optional): Initialization config. Defaults to None.
    """

    def __init__(self,
                 loss: dict = dict(type='UniGradLoss'),
                 loss_type: str = 'dense',
                 predictor: Optional[dict] = None,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(init_cfg=init_cfg)
        if loss_type not in ('dense', 'global'):
            raise ValueError("loss_type must be 'dense' or 'global', got "
                             f'{loss_type!r}')
        self.loss_type = loss_type
        self.predictor = MODELS.build(predictor) if predictor else None
        self.loss_module = MODELS.build(loss)

    def loss(self,
             pred: torch.Tensor,
             target: torch.Tensor,
             corr: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Scalar loss.

        Args:
            pred (Tensor): Predictions (B, N, C) or embeddings (B, C); with a
                ``predictor``, its input.
            target (Tensor): Targets of the prediction's shape (no gradient).
            corr (Tensor, optional): The UniGrad correlation held fixed
                (exact accumulation: the whole batch's), passed on to the
                loss. Defaults to None (the batch's own).

        Returns:
            Tensor: The loss, a scalar.
        """
        if self.predictor is not None:
            pred = self.predictor([pred])[0]
        if pred.shape != target.shape:
            raise ValueError(f'UniGradHead: pred {tuple(pred.shape)} and '
                             f'target {tuple(target.shape)} must have the '
                             'same shape')
        if pred.dim() not in (2, 3):
            raise ValueError(
                'UniGradHead takes (B, C) embeddings or (B, N, C) token '
                f'features, got pred of shape {tuple(pred.shape)}')
        if self.loss_type == 'global' and pred.dim() == 3:
            pred, target = pred.mean(dim=1), target.mean(dim=1)
        if corr is None:
            return self.loss_module(pred, target.detach())
        return self.loss_module(pred, target.detach(), corr=corr)

    @property
    def last_terms(self) -> Dict[str, torch.Tensor]:
        """The terms of the last loss (``alignment``, ``correlation``;
        detached, for logging: they sum to it), where the loss module
        records them."""
        return dict(getattr(self.loss_module, 'last_terms', None) or {})
