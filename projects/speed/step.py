"""One training step of a model, timed, at a precision, eager or
compiled; and the GEMM that measures the machine's peak."""
import time

import torch

from mmsiameseim.precision import (FLAGS, PRECISIONS, autocast,
                                   precision_from_flag)


def precision_context(precision: str, device: str):
    """The forward's context for a ``--precision`` flag: ``torch.autocast``
    for 'bf16' and 'fp16', nothing for 'fp32' (plain fp32, not an autocast
    asked for an unsupported dtype); the evaluation's
    :func:`~mmsiameseim.evaluation.autocast` of the flag's precision
    (:func:`~mmsiameseim.precision.precision_from_flag`)."""
    try:
        name = precision_from_flag(precision)
    except ValueError:
        raise ValueError(f'unknown precision {precision!r}: one of '
                         f'{list(FLAGS)}') from None
    return autocast(device, name)


def _sync(device: str) -> None:
    if device == 'cuda':
        torch.cuda.synchronize()


class TrainStep:
    """Forward (``model(**data, mode='loss')``) + backward + AdamW step of
    a model (+ SiameseIM's momentum update, inside its forward).

    Args:
        model (nn.Module): The model.
        data (dict): Its inputs.
        precision (str): 'fp32', 'bf16' (autocast) or 'fp16' (AMP with a
            loss scaler, CUDA).
        device (str): 'cpu' or 'cuda'.
        compile (bool | dict): ``torch.compile`` the step (options as
            mmengine's ``compile``: True or a dict of its arguments), as
            mmengine's Runner compiles ``train_step``. Defaults to False.
        fused_adamw (bool): ``AdamW(fused=True)`` (one kernel for all
            parameters, CPU and CUDA) instead of the default foreach
            implementation. Defaults to False.
    """

    def __init__(self,
                 model: torch.nn.Module,
                 data: dict,
                 precision: str,
                 device: str,
                 compile=False,
                 fused_adamw: bool = False):
        self.model = model.to(device).train()
        self.data, self.precision, self.device = data, precision, device
        params = [p for p in model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(
            params,
            lr=1e-4,
            betas=(0.9, 0.95),
            **({
                'fused': True
            } if fused_adamw else {}))
        self.scaler = torch.amp.GradScaler(device, enabled=precision == 'fp16')
        self._step = self._train_step
        if compile:
            options = {} if compile is True else dict(compile)
            self._step = torch.compile(self._train_step, **options)

    def _forward_backward(self) -> None:
        with precision_context(self.precision, self.device):
            losses = self.model(**self.data, mode='loss')
        loss = sum(v for k, v in losses.items() if 'loss' in k)
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()

    def _train_step(self) -> None:
        self._forward_backward()
        self.scaler.step(self.opt)
        self.scaler.update()

    def step(self) -> float:
        """Seconds of one training step."""
        _sync(self.device)
        t0 = time.perf_counter()
        self._step()
        _sync(self.device)
        return time.perf_counter() - t0

    def flops(self) -> int:
        """FLOPs of one forward + backward, eager, counted by
        ``torch.utils.flop_counter`` (the optimizer step not counted).

        Attention goes through its matmul form, which the counter knows (the
        CPU fused kernel it does not).
        """
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.utils.flop_counter import FlopCounterMode
        counter = FlopCounterMode(display=False)
        with counter, sdpa_kernel(SDPBackend.MATH):
            self._forward_backward()
        self.opt.zero_grad(set_to_none=True)
        return counter.get_total_flops()


class GemmStep:
    """One ``n x n @ n x n`` matrix product at a precision: the machine's
    GEMM peak, timed like a training step (2 n^3 FLOPs).

    Args:
        precision (str): 'fp32' (fp32 operands), 'bf16' or 'fp16' (operands
            of that dtype, as autocast gives the matmuls).
        device (str): 'cpu' or 'cuda'.
        n (int): Matrix size. Defaults to 4096.
    """

    def __init__(self, precision: str, device: str, n: int = 4096):
        dtype = PRECISIONS[precision_from_flag(precision)] or torch.float32
        g = torch.Generator().manual_seed(0)
        self.a, self.b = (
            torch.randn(n, n, generator=g).to(device, dtype) for _ in range(2))
        self.n, self.device = n, device

    def step(self) -> float:
        _sync(self.device)
        t0 = time.perf_counter()
        torch.mm(self.a, self.b)
        _sync(self.device)
        return time.perf_counter() - t0

    def flops(self) -> int:
        return 2 * self.n**3
