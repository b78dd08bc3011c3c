"""The hook a preflight adds to the runner: it times the training steps,
counts the FLOPs of the first one, records which parameters receive a
gradient and the losses, and stops training after the requested
iterations."""
import statistics
import time
from typing import Dict, List, Optional

import torch
from mmengine.hooks import Hook
from mmengine.runner import EpochBasedTrainLoop


class PreflightHook(Hook):
    """Measure a few training iterations of a runner.

    Args:
        iters (int): Stop training after this many iterations (iteration
            loops; epoch loops stop after their first epoch, which the
            preflight sizes to ``iters``).
        count_flops (bool): Count the FLOPs of the first iteration
            (``torch.utils.flop_counter``). Defaults to True.
    """

    # above LoggerHook (BELOW_NORMAL): mmengine's log processor resets the
    # CUDA peak counter when it logs, so the hook reads it first
    priority = 'NORMAL'

    def __init__(self, iters: int, count_flops: bool = True) -> None:
        self.iters = iters
        self.count_flops = count_flops
        self.step_times: List[float] = []
        self.losses: List[Dict[str, float]] = []
        self.with_grad: set = set()
        #: parameters whose gradient was non-zero at some step, and those
        #: whose gradient was not finite at some step
        self.moving: set = set()
        self.nonfinite: set = set()
        self.trainable: List[str] = []
        self.ndim: Dict[str, int] = {}
        self.flops: Optional[int] = None
        self.optimizer = None
        self._handles = []
        self._counter = None
        self._t0 = 0.
        self.peak_cuda_bytes = 0

    def before_train(self, runner) -> None:
        model = runner.model
        for name, p in model.named_parameters():
            if not p.requires_grad:
                continue
            self.trainable.append(name)
            self.ndim[name] = p.ndim

            def seen(param, name=name):
                grad = param.grad
                if grad is None:
                    return
                self.with_grad.add(name)
                if not bool(torch.isfinite(grad).all()):
                    self.nonfinite.add(name)
                elif name not in self.moving and bool(grad.any()):
                    self.moving.add(name)

            self._handles.append(p.register_post_accumulate_grad_hook(seen))

    def before_train_iter(self,
                          runner,
                          batch_idx: int,
                          data_batch=None) -> None:
        if self.count_flops and not self.step_times:
            from torch.utils.flop_counter import FlopCounterMode
            self._counter = FlopCounterMode(display=False)
            self._counter.__enter__()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self._t0 = time.perf_counter()

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs=None) -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
            self.peak_cuda_bytes = max(self.peak_cuda_bytes,
                                       torch.cuda.max_memory_allocated())
        self.step_times.append(time.perf_counter() - self._t0)
        if self._counter is not None:
            self._counter.__exit__(None, None, None)
            self.flops = self._counter.get_total_flops()
            self._counter = None
        self.losses.append({
            k:
            float(v.detach() if isinstance(v, torch.Tensor) else v)
            for k, v in (outputs or {}).items()
            if 'loss' in k and isinstance(v, (torch.Tensor, float, int)) and (
                not isinstance(v, torch.Tensor) or v.numel() == 1)
        })
        if (not isinstance(runner.train_loop, EpochBasedTrainLoop)
                and len(self.step_times) >= self.iters):
            runner.train_loop.stop_training = True

    def after_train_epoch(self, runner) -> None:
        runner.train_loop.stop_training = True

    def after_train(self, runner) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def step_time(self) -> Optional[float]:
        """Median step time, the first (warm-up, FLOP-counted) step left out
        when there are others."""
        times = self.step_times[1:] or self.step_times
        return statistics.median(times) if times else None
