import math
from typing import Optional

from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS

from ...checkpoint.finite import nonfinite_tensors


def nonfinite_weights(checkpoint: dict) -> Optional[str]:
    """None when every floating-point tensor of the checkpoint's
    ``state_dict`` is finite, else where and how many are not."""
    state = checkpoint.get('state_dict', {})
    bad = nonfinite_tensors(state)
    if not bad:
        return None
    meta = checkpoint.get('meta', {})
    more = ', ...' if len(bad) > 3 else ''
    return (f'iteration {meta.get("iter")} (epoch {meta.get("epoch")}): '
            f'{len(bad)} of {len(state)} tensors hold NaN or inf '
            f'({", ".join(bad[:3])}{more})')


@HOOKS.register_module()
class StopOnNonFiniteLossHook(Hook):
    """Stop training with a clear error when the loss or the weights turn
    NaN or infinite, before such a state reaches a checkpoint.

    * The loss is read every ``interval`` iterations, before the
      ``CheckpointHook`` of the same iteration runs (priority 'LOW').
    * Every checkpoint is checked before it is written: one with non-finite
      weights is not written (``last_checkpoint`` keeps pointing at the
      last good one) and training stops, naming the iteration.
    * A checkpoint loaded to resume or to start from is refused the same
      way, before its weights reach the model.

    mmengine's ``CheckInvalidLossHook`` fails with a bare assertion and runs
    after the checkpoint hook. Reading the loss synchronises the device, so
    on GPUs set ``interval`` to the logging interval: the checkpoint check
    does not depend on it.

    Args:
        interval (int): Check the loss every ``interval`` iterations.
            Defaults to 1.
    """

    priority = 'LOW'

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

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        problem = nonfinite_weights(checkpoint)
        if problem:
            raise FloatingPointError(
                f'not saving the checkpoint of {problem}. Training stopped; '
                'last_checkpoint still names the last good checkpoint. '
                'Lower the learning rate or check the gradient clipping.')

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        problem = nonfinite_weights(checkpoint)
        if problem:
            raise FloatingPointError(
                f'refusing a checkpoint with non-finite weights, of '
                f'{problem}. Resume from an earlier checkpoint '
                '(--resume PATH) or start a new run.')
