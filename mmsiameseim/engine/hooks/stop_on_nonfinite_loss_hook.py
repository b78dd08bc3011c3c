import math
from typing import Optional

from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class StopOnNonFiniteLossHook(Hook):
    """Stop training with a clear error when the loss is NaN or infinite.

    mmengine's ``CheckInvalidLossHook`` fails with a bare assertion; this hook
    names the iteration and epoch. Checking reads the loss on the host, so on
    GPUs set ``interval`` to the logging interval.

    Args:
        interval (int): Check every ``interval`` iterations. Defaults to 1.
    """

    priority = 'VERY_LOW'

    def __init__(self, interval: int = 1) -> None:
        self.interval = interval

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch: Optional[dict] = None,
                         outputs: Optional[dict] = None) -> None:
        if not outputs or 'loss' not in outputs:
            return
        if not self.every_n_train_iters(runner, self.interval):
            return
        value = float(outputs['loss'].detach())
        if not math.isfinite(value):
            raise FloatingPointError(
                f'loss is {value} at iteration {runner.iter + 1} (epoch '
                f'{runner.epoch + 1}): training stopped. Lower the learning '
                'rate, check the gradient clipping, or look for corrupt '
                'inputs in this batch.')
