from typing import Callable, Optional

import torch
import torch.nn.functional as F


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
    chunk_rows)``: pred and target (n, D); ``layer_norm_eps`` None for no
    target normalisation.
    """

    @staticmethod
    def forward(ctx, pred: torch.Tensor, target: torch.Tensor,
                lambda_neg: float, layer_norm_eps: Optional[float],
                reduce_corr: Callable[[torch.Tensor], torch.Tensor],
                chunk_rows: int) -> torch.Tensor:
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
        return grad_pred, None, None, None, None, None
