"""The UniGrad loss (:class:`UniGradLoss`, with the correlation over the
global batch) and the chunked autograd function of its gradient
(:class:`ChunkedUniGrad`).

:class:`~mmsiameseim.models.heads.UniGradHead` applies it to the neck's
predictions and the target.
"""
from typing import Callable, Dict, Optional

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """sum(a * b) over (rows, D) tensors, as a float64 scalar.

    One dot product per row (a batched (1, D) @ (D, 1) matmul, no a * b
    temporary), the rows then summed in float64: the rounding error is that
    of a D-term dot product, whatever the number of rows. (A single
    (1, k) @ (k, 1) matmul over all k = rows * D products loses about 5e-4
    relative at k = 1e6 on CPUs, and its error grows with k; ``torch.dot``
    about 3e-6.)
    """
    rows = a.unsqueeze(-2) @ b.unsqueeze(-1)
    return rows.view(-1).sum(dtype=torch.float64)


class ChunkedUniGrad(torch.autograd.Function):
    """UniGrad loss with a hand-written gradient, token rows in chunks.

    For predictions y_i (used as they are) and detached targets z_i (after
    an optional per-token LayerNorm), n rows, D channels and
    C = sum_i z_i z_i^T / n (then ``reduce_corr``, e.g. a mean over ranks)::

        L = (sum_i ||y_i - z_i||^2 + lambda * sum_i y_i^T C y_i) / (n D)
        dL/dy_i = (2 (y_i - z_i) + 2 lambda C y_i) / (n D)   (C symmetric)

    The forward pass makes two passes over chunks of ``chunk_rows`` rows:
    the first sums C, the second the loss terms, and writes dL/dy into one
    (n, D) buffer, the only tokens x D tensor kept for backward (autograd
    on the plain formula keeps several). Computes in fp32 (fp64 for fp64
    inputs, so that ``gradcheck`` applies). The target gets no gradient.
    Double backward is not supported: the saved gradient is a constant.

    ``apply(pred, target, lambda_neg, layer_norm_eps, reduce_corr,
    chunk_rows, terms)``: pred and target (n, D); ``layer_norm_eps`` None for
    no target normalisation; ``terms`` a dict that receives the loss's two
    terms (``alignment`` and ``correlation``, detached), or None.
    """

    @staticmethod
    def forward(ctx,
                pred: torch.Tensor,
                target: torch.Tensor,
                lambda_neg: float,
                layer_norm_eps: Optional[float],
                reduce_corr: Callable[[torch.Tensor], torch.Tensor],
                chunk_rows: int,
                terms: Optional[dict] = None) -> torch.Tensor:
        dtype = torch.float64 if pred.dtype == torch.float64 \
            else torch.float32
        n, dims = pred.shape
        target = target.detach()

        def target_rows(start):
            z = target[start:start + chunk_rows].to(dtype)
            if layer_norm_eps is not None:
                z = F.layer_norm(z, (dims, ), eps=layer_norm_eps)
            return z

        starts = range(0, n, chunk_rows)
        corr = pred.new_zeros((dims, dims), dtype=dtype)
        for s in starts:
            z = target_rows(s)
            corr.addmm_(z.T, z)
        corr = reduce_corr(corr / n)

        need_grad = ctx.needs_input_grad[0]
        grad = pred.new_empty((n, dims), dtype=dtype) if need_grad else None
        pos = pred.new_zeros((), dtype=torch.float64)
        neg = pred.new_zeros((), dtype=torch.float64)
        for s in starts:
            rows = slice(s, s + chunk_rows)
            y = pred[rows].detach().to(dtype).contiguous()
            # y - z goes straight into the gradient buffer when there is one
            diff = torch.sub(
                y, target_rows(s), out=grad[rows] if need_grad else None)
            pos += _dot(diff, diff)
            corr_y = y @ corr
            neg += _dot(corr_y, y)
            if need_grad:  # 2 (y - z) + 2 lambda C y, over n D below
                diff.add_(corr_y, alpha=lambda_neg)
        if need_grad:
            grad.mul_(2.0 / (n * dims))
            ctx.save_for_backward(grad)
        ctx.pred_dtype = pred.dtype
        ctx.chunk_rows = chunk_rows
        if terms is not None:
            terms.update(
                alignment=(pos / (n * dims)).to(dtype),
                correlation=(lambda_neg * neg / (n * dims)).to(dtype))
        return ((pos + lambda_neg * neg) / (n * dims)).to(dtype)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        (grad, ) = ctx.saved_tensors
        if ctx.pred_dtype == grad.dtype:
            grad_pred = grad * grad_output
        else:  # cast chunk by chunk: no full-size fp32 temporary
            grad_pred = grad.new_empty(grad.shape, dtype=ctx.pred_dtype)
            for s in range(0, grad.shape[0], ctx.chunk_rows):
                rows = slice(s, s + ctx.chunk_rows)
                grad_pred[rows] = grad[rows] * grad_output
        return grad_pred, None, None, None, None, None, None


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

    Exact gradient accumulation (``SiameseIM(micro_batches=k)``,
    :mod:`~mmsiameseim.models.algorithms.exact_accumulation`): the
    correlation C of a whole batch is computed first from its targets
    (:meth:`correlation`) and passed as ``corr`` while the parts' losses
    are computed one at a time; their mean is then the whole batch's loss
    and their gradients sum to its gradient. 'moco-like' normalises the
    predictions over the batch too, so it cannot be split this way.

    After each call, :attr:`last_terms` holds the loss's two terms, detached,
    for logging: ``alignment`` (``mean_i ||y_i - z_i||^2 / D``) and
    ``correlation`` (``lambda * mean_i y_i^T C y_i / D``); they sum to the
    loss.

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
        self.last_terms: Dict[str, torch.Tensor] = {}

    def correlation(self, target: torch.Tensor) -> torch.Tensor:
        """This rank's C = mean_i z_i z_i^T (D, D) of ``target`` (..., D),
        normalised as the loss normalises it, in fp32 (not all-reduced); the
        ``corr`` of exact accumulation.

        Not with 'moco-like', which normalises the predictions over the batch
        too.
        """
        if self.target_norm == 'moco-like':
            raise ValueError("UniGradLoss: target_norm='moco-like' "
                             'normalises predictions over the batch; a '
                             'batch cannot be split with a fixed correlation')
        with torch.autocast(device_type=target.device.type, enabled=False):
            z = target.detach().reshape(-1, target.shape[-1]).float()
            z = self._normalise(z, z)[1]
            return z.T @ z / z.shape[0]

    def _normalise(self, y: torch.Tensor, z: torch.Tensor):
        if self.target_norm == 'mae-like':
            z = F.layer_norm(z, z.shape[-1:], eps=self.eps)
        elif self.target_norm == 'moco-like':
            y = F.normalize(self._batch_norm(y), dim=-1)
            z = F.normalize(self._batch_norm(z), dim=-1)
        return y, z

    def _batch_norm(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, None, None, training=True, eps=self.eps)

    def forward(self,
                pred: torch.Tensor,
                target: torch.Tensor,
                corr: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Loss for predictions and targets of shape (..., D).

        Args:
            pred (Tensor): Predictions (..., D).
            target (Tensor): Targets of the prediction's shape (no gradient).
            corr (Tensor, optional): The (D, D) correlation to use instead
                of the one of ``target`` averaged over the ranks: the whole
                batch's (:meth:`correlation`, averaged over the ranks), when
                exact accumulation scores the batch's parts one at a time.
                Defaults to None.
        """

        def reduce_corr(own: torch.Tensor) -> torch.Tensor:
            if corr is not None:
                return corr.to(own.dtype)
            return all_reduce_mean(own)

        with torch.autocast(device_type=pred.device.type, enabled=False):
            channels = pred.shape[-1]
            terms = {}
            if self.memory_efficient and self.target_norm != 'moco-like':
                loss = ChunkedUniGrad.apply(
                    pred.reshape(-1, channels), target.reshape(-1, channels),
                    self.lambda_neg,
                    self.eps if self.target_norm == 'mae-like' else None,
                    reduce_corr, self.chunk_rows, terms)
            else:
                y = pred.reshape(-1, channels).float()
                z = target.detach().reshape(-1, channels).float()
                y, z = self._normalise(y, z)
                pos = (y - z).pow(2).sum(-1).mean()
                c = reduce_corr(z.T @ z / z.shape[0])
                neg = ((y @ c) * y).sum(-1).mean()
                loss = (pos + self.lambda_neg * neg) / channels
                terms.update(
                    alignment=pos.detach() / channels,
                    correlation=self.lambda_neg * neg.detach() / channels)
            self.last_terms = terms
            return loss
