import os.path as osp
import signal
import threading
from typing import Optional, Sequence

import torch
from mmengine.dist import all_reduce, barrier, get_world_size, is_main_process
from mmengine.hooks import CheckpointHook, Hook
from mmpretrain.registry import HOOKS

from ..checkpoint_files import LAST_CHECKPOINT, write_text_atomic


@HOOKS.register_module()
class PreemptionCheckpointHook(Hook):
    """On SIGTERM (what slurm and Kubernetes send before killing a job) or
    the signal a scheduler sends ahead of its deadline (slurm's
    ``--signal=USR1@120``), finish the current iteration, write an
    iteration checkpoint, log it and exit with ``128 + signal number``.

    The signal handler only records the signal; the hook acts at the end of
    the iteration, once every other ``after_train_iter`` hook (the loss
    check, the regular checkpoints) has run, so the checkpoint is
    ``iter_N.pth`` after N finished iterations, written like the regular
    iteration checkpoints (through the config's iteration
    ``CheckpointHook`` when there is one: same folder, rotation and
    ``last_checkpoint``), and ``--resume`` trains exactly the iterations
    left (``ExactResumeEpochBasedTrainLoop``). Under several processes the
    ranks agree every ``interval`` iterations (a one-number all-reduce) on
    whether any of them was signalled, so all stop after the same
    iteration; rank 0 writes, all wait for it, all exit.

    The exit status is that of a process killed by the signal (143 for
    SIGTERM, 138 for SIGUSR1) unless ``exit_code`` is given: the run is
    reported as interrupted, not finished, and a batch script can requeue
    on it (docs/pretraining/resume_and_preemption.md). The previous signal
    handlers are restored when training ends.

    A hook rather than a Runner feature so that a config can tune or drop
    it; ``FaultTolerantRunner`` adds one with the config's ``preemption``
    settings when the config has none.

    Args:
        signals (Sequence[str]): Signal names to handle.
            Defaults to ('SIGTERM', 'SIGUSR1').
        interval (int): Check for a signal every ``interval`` iterations
            (under several processes each check is an all-reduce).
            Defaults to 1.
        exit_code (int, optional): Exit status after the checkpoint;
            defaults to 128 + the signal's number.
    """

    priority = 'LOWEST'

    def __init__(self,
                 signals: Sequence[str] = ('SIGTERM', 'SIGUSR1'),
                 interval: int = 1,
                 exit_code: Optional[int] = None) -> None:
        try:
            self.signals = [signal.Signals[name] for name in signals]
        except KeyError as e:
            raise ValueError(
                f'PreemptionCheckpointHook: unknown signal {e.args[0]!r}; '
                f'expected names such as SIGTERM, SIGUSR1') from None
        if interval < 1:
            raise ValueError(f'PreemptionCheckpointHook: interval must be '
                             f'>= 1, got {interval}')
        self.interval = interval
        self.exit_code = exit_code
        self.received: Optional[int] = None
        self._previous: dict = {}

    def _record(self, signum: int, frame) -> None:
        if self.received is None:
            self.received = signum

    def before_train(self, runner) -> None:
        if threading.current_thread() is not threading.main_thread():
            runner.logger.warning(
                'PreemptionCheckpointHook: training runs outside the main '
                'thread, where signal handlers cannot be installed; a '
                'signal will stop the run without a checkpoint')
            return
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._record)

    def after_train(self, runner) -> None:
        self._restore()

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _agreed_signal(self) -> int:
        """The signal any rank received (0: none)."""
        signum = torch.tensor([self.received or 0])
        if get_world_size() > 1:
            all_reduce(signum, op='max')
        return int(signum.item())

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs=None) -> None:
        if not self.every_n_train_iters(runner, self.interval):
            return
        signum = self._agreed_signal()
        if not signum:
            return
        name = signal.Signals(signum).name
        path = self._save(runner)
        code = 128 + signum if self.exit_code is None else self.exit_code
        runner.logger.info(
            f'{name} received: stopped after iteration {runner.iter + 1} of '
            f'{runner.max_iters} (epoch {runner.epoch + 1}) and saved '
            f'{path}; exiting with status {code}. Continue with --resume '
            '(the same command plus --resume).')
        barrier()
        self._restore()
        raise SystemExit(code)

    def _save(self, runner) -> str:
        """Write (or find) the checkpoint after this iteration."""
        step = runner.iter + 1
        hooks = [
            h for h in runner.hooks
            if isinstance(h, CheckpointHook) and not h.by_epoch
        ]
        if hooks:
            hook = hooks[0]
            path = hook.file_backend.join_path(hook.out_dir,
                                               hook.filename_tmpl.format(step))
            if not (runner.message_hub.get_info('last_ckpt') == path
                    and osp.exists(path)):
                hook._save_checkpoint(runner)
            return path
        filename = f'iter_{step}.pth'
        runner.save_checkpoint(runner.work_dir, filename, by_epoch=False)
        path = osp.join(runner.work_dir, filename)
        if is_main_process():
            write_text_atomic(osp.join(runner.work_dir, LAST_CHECKPOINT), path)
        return path
