from contextlib import contextmanager
from typing import Iterator, Optional

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .unigrad_function import ChunkedUniGrad

_NORMS = ('mae-like', 'moco-like', 'none')


def all_reduce_mean(x: torch.Tensor) -> torch.Tensor:
    """The mean of ``x`` over the ranks (``x`` itself in one process)."""
    if dist.is_available() and dist.is_initialized() \
            and dist.get_world_size() > 1:
        x = x.clone()
        dist.all_reduce(x)
        x = x / dist.get_world_size()
    return x


@MODELS.register_module()
class UniGradLoss(nn.Module):
    """UniGrad loss (Tao et al., 2022) on dense token features.

    With predictions y_i and (normalised) targets z_i over all tokens,
    C = sum_i z_i z_i^T / count (averaged across ranks) and D channels::

        L = (mean_i ||y_i - z_i||^2 + lambda * mean_i y_i^T C y_i) / D

    Memory is O(tokens * D + D^2): the negative term is computed as
    ``((y @ C) * y).sum(-1)``, never as a tokens x tokens matrix. Runs in fp32
    with autocast off. The target receives no gradient.

    With 'mae-like' and 'none' target norms the loss goes by default through
    :class:`ChunkedUniGrad`: token rows in chunks and an analytic gradient,
    so that backward keeps one tokens x D buffer instead of the several
    temporaries autograd keeps for the formula above (double backward is
    not supported on that path). 'moco-like' always uses autograd.

    Exact gradient accumulation (``SiameseIM(micro_batches=k)``): the
    correlation C of a whole batch can be computed first from its targets
    (:meth:`correlation` of each part, averaged and all-reduced) and held
    fixed (:meth:`fixed_correlation`) while the parts' losses are computed
    one at a time; their mean is then the whole batch's loss and their
    gradients sum to its gradient. 'moco-like' normalises the predictions
    over the batch too, so it cannot be split this way.

    Args:
        lambda_neg (float): Weight of the correlation term. Defaults to 0.02.
        target_norm (str): 'mae-like' (LayerNorm without affine on the
            target, the authors' default), 'moco-like' (BatchNorm without
            affine over tokens, then l2, on both prediction and target) or
            'none'. Defaults to 'mae-like'.
        eps (float): Epsilon of the normalisation. Defaults to 1e-5.
        memory_efficient (bool): Use the chunked analytic-gradient path for
            'mae-like' and 'none'; False runs the plain autograd formula
            (the reference). Defaults to True.
        chunk_rows (int): Token rows per chunk of that path. Defaults to
            2048.
    """

    def __init__(self,
                 lambda_neg: float = 0.02,
                 target_norm: str = 'mae-like',
                 eps: float = 1e-5,
                 memory_efficient: bool = True,
                 chunk_rows: int = 2048) -> None:
        super().__init__()
        if target_norm not in _NORMS:
            raise ValueError(
                f'target_norm must be one of {_NORMS}, got {target_norm!r}')
        self.lambda_neg = lambda_neg
        self.target_norm = target_norm
        self.eps = eps
        if chunk_rows < 1:
            raise ValueError(f'chunk_rows must be >= 1, got {chunk_rows}')
        self.memory_efficient = memory_efficient
        self.chunk_rows = chunk_rows
        self._fixed_corr: Optional[torch.Tensor] = None

    @property
    def splits_exactly(self) -> bool:
        """Whether a batch's loss is the mean of its parts' losses under a
        fixed correlation (not with 'moco-like' normalisation)."""
        return self.target_norm != 'moco-like'

    def correlation(self, target: torch.Tensor) -> torch.Tensor:
        """This rank's C = mean_i z_i z_i^T (D, D) of ``target`` (..., D),
        normalised as the loss normalises it, in fp32 (not all-reduced)."""
        if not self.splits_exactly:
            raise ValueError("UniGradLoss: target_norm='moco-like' "
                             'normalises predictions over the batch; a '
                             'batch cannot be split with a fixed correlation')
        with torch.autocast(device_type=target.device.type, enabled=False):
            z = target.detach().reshape(-1, target.shape[-1]).float()
            if self.target_norm == 'mae-like':
                z = F.layer_norm(z, z.shape[-1:], eps=self.eps)
            return z.T @ z / z.shape[0]

    @contextmanager
    def fixed_correlation(self, corr: torch.Tensor) -> Iterator[None]:
        """Use ``corr`` (the whole batch's, already averaged over ranks) as C
        inside the block instead of the batch's own."""
        if not self.splits_exactly:
            raise ValueError("UniGradLoss: target_norm='moco-like' cannot "
                             'use a fixed correlation')
        self._fixed_corr = corr
        try:
            yield
        finally:
            self._fixed_corr = None

    def _reduce_corr(self, corr: torch.Tensor) -> torch.Tensor:
        if self._fixed_corr is not None:
            return self._fixed_corr.to(corr.dtype)
        return all_reduce_mean(corr)

    def _normalise(self, y: torch.Tensor, z: torch.Tensor):
        if self.target_norm == 'mae-like':
            z = F.layer_norm(z, z.shape[-1:], eps=self.eps)
        elif self.target_norm == 'moco-like':
            y = F.normalize(self._batch_norm(y), dim=-1)
            z = F.normalize(self._batch_norm(z), dim=-1)
        return y, z

    def _batch_norm(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, None, None, training=True, eps=self.eps)

    def forward(self, pred: torch.Tensor,
                target: torch.Tensor) -> torch.Tensor:
        """Loss for predictions and targets of shape (..., D)."""
        with torch.autocast(device_type=pred.device.type, enabled=False):
            channels = pred.shape[-1]
            if self.memory_efficient and self.target_norm != 'moco-like':
                return ChunkedUniGrad.apply(
                    pred.reshape(-1, channels), target.reshape(-1, channels),
                    self.lambda_neg,
                    self.eps if self.target_norm == 'mae-like' else None,
                    self._reduce_corr, self.chunk_rows)
            y = pred.reshape(-1, channels).float()
            z = target.detach().reshape(-1, channels).float()
            y, z = self._normalise(y, z)
            pos = (y - z).pow(2).sum(-1).mean()
            corr = self._reduce_corr(z.T @ z / z.shape[0])
            neg = ((y @ corr) * y).sum(-1).mean()
            return (pos + self.lambda_neg * neg) / channels
