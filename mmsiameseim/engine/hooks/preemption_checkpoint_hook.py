import os
import os.path as osp
import signal
import sys
import threading
from typing import Optional, Sequence

import torch
from mmengine.dist import all_reduce, barrier, get_world_size, is_main_process
from mmengine.hooks import CheckpointHook, Hook
from mmpretrain.registry import HOOKS

from ...atomic_io import atomic_write
from ..checkpoint_files import LAST_CHECKPOINT


@HOOKS.register_module()
class PreemptionCheckpointHook(Hook):
    """On SIGTERM (what slurm and Kubernetes send before killing a job),
    the signal a scheduler sends ahead of its deadline (slurm's
    ``--signal=USR1@120``), Ctrl-C (SIGINT) or the death of the launcher
    that started this process, finish the current iteration, write an
    iteration checkpoint, log it and exit with ``128 + signal number``.

    Ctrl-C reaches every process of the terminal's process group, the
    DataLoader's workers included: they inherit the recording handler
    (started after it is installed, with the 'fork' start method), so they
    keep loading until the iteration ends. A second Ctrl-C stops at once,
    without a checkpoint.

    The launcher: when this process was started by a Python process (``mim
    train``, torchrun, a wrapper script) and that process goes away (killed
    while this one trains on as an orphan), the run stops as on SIGTERM, so
    no orphan keeps writing into the work dir. A shell or init parent is not
    watched (``nohup ... &`` and a closed terminal keep training).

    The signal handler only records the signal; the hook acts at the end of
    the iteration, once every other ``after_train_iter`` hook (the loss
    check, the regular checkpoints) has run, so the checkpoint is
    ``iter_N.pth`` after N finished iterations, written like the regular
    iteration checkpoints (through the config's iteration
    ``CheckpointHook`` when there is one: same folder, rotation and
    ``last_checkpoint``), and ``--resume`` trains exactly the iterations
    left under ``ExactResumeEpochBasedTrainLoop`` or ``IterBasedTrainLoop``
    (``FaultTolerantRunner`` runs mmengine's plain ``EpochBasedTrainLoop``
    as the former; a loop that would replay the interrupted epoch is named
    in a warning with the iteration the resumed run will end at). Under
    several processes the ranks agree every ``interval`` iterations (a
    one-number all-reduce) on whether any of them was signalled, so all
    stop after the same iteration; rank 0 writes, all wait for it, all exit.

    The exit status is that of a process killed by the signal (143 for
    SIGTERM and a lost launcher, 138 for SIGUSR1, 130 for SIGINT) unless
    ``exit_code`` is given: the run is reported as interrupted, not
    finished, and a batch script can requeue on it
    (docs/pretraining/resume_and_preemption.md). The previous signal
    handlers are restored when training ends.

    A hook rather than a Runner feature so that a config can tune or drop
    it; ``FaultTolerantRunner`` adds one with the config's ``preemption``
    settings when the config has none.

    Args:
        signals (Sequence[str]): Signal names to handle.
            Defaults to ('SIGTERM', 'SIGUSR1', 'SIGINT').
        interval (int): Check for a signal every ``interval`` iterations
            (under several processes each check is an all-reduce).
            Defaults to 1.
        exit_code (int, optional): Exit status after the checkpoint;
            defaults to 128 + the signal's number.
        stop_with_launcher (bool): Stop as on SIGTERM when the Python
            process that started this one is gone. Defaults to True.
    """

    priority = 'LOWEST'

    def __init__(self,
                 signals: Sequence[str] = ('SIGTERM', 'SIGUSR1', 'SIGINT'),
                 interval: int = 1,
                 exit_code: Optional[int] = None,
                 stop_with_launcher: bool = True) -> None:
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
        self.stop_with_launcher = stop_with_launcher
        self.received: Optional[int] = None
        self._previous: dict = {}
        self._launcher: Optional[int] = None
        self._lost_launcher: Optional[int] = None
        self._pid = os.getpid()

    def _record(self, signum: int, frame) -> None:
        if os.getpid() != self._pid:
            return  # a DataLoader worker: the main process stops the run
        if self.received is None:
            self.received = signum
            if signum == signal.SIGINT:
                print(
                    'Ctrl-C: stopping after this iteration with a checkpoint'
                    ' (press Ctrl-C again to stop at once, without one)',
                    file=sys.stderr,
                    flush=True)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt

    def _launcher_gone(self) -> bool:
        return (self._launcher is not None and os.getppid() != self._launcher)

    def before_train(self, runner) -> None:
        if threading.current_thread() is not threading.main_thread():
            runner.logger.warning(
                'PreemptionCheckpointHook: training runs outside the main '
                'thread, where signal handlers cannot be installed; a '
                'signal will stop the run without a checkpoint')
            return
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._record)
        if self.stop_with_launcher and _is_python(os.getppid()):
            self._launcher = os.getppid()

    def after_train(self, runner) -> None:
        self._restore()

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _agreed_signal(self) -> int:
        """The signal any rank received (0: none); SIGTERM for a rank whose
        launcher is gone."""
        if self.received is None and self._launcher_gone():
            self.received = signal.SIGTERM
            self._lost_launcher = self._launcher
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
        reason = f'{signal.Signals(signum).name} received'
        if self._lost_launcher is not None:
            reason = (f'the launcher (pid {self._lost_launcher}) that started '
                      'this process is gone (SIGTERM)')
        path = self._save(runner)
        code = 128 + signum if self.exit_code is None else self.exit_code
        runner.logger.info(
            f'{reason}: stopped after iteration {runner.iter + 1} of '
            f'{runner.max_iters} (epoch {runner.epoch + 1}) and saved '
            f'{path}; exiting with status {code}. Continue with --resume '
            '(the same command plus --resume).')
        if not getattr(runner, 'warns_inexact_resume', False):
            # here, not at the top: the runner package imports this hook
            from ..runner.resume_exactness import overrun_note
            overrun = overrun_note(runner.train_loop, runner.iter + 1)
            if overrun:
                runner.logger.warning(overrun)
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
            atomic_write(osp.join(runner.work_dir, LAST_CHECKPOINT), path)
        return path


def _is_python(pid: int) -> bool:
    """Whether process ``pid`` runs Python (a launcher such as ``mim train``
    or torchrun, not a shell or init); False where /proc cannot tell."""
    try:
        exe = osp.basename(os.readlink(f'/proc/{pid}/exe'))
    except OSError:
        return False
    return exe.startswith('python') or exe.startswith('pypy')


def add_preemption_hook(runner) -> None:
    """Register a :class:`PreemptionCheckpointHook` with the config's
    ``preemption`` settings (a dict of its arguments, default ``dict()``;
    None leaves it out) when ``runner`` has none yet."""
    settings = runner.cfg.get('preemption', dict())
    if settings is not None and not any(
            isinstance(h, PreemptionCheckpointHook) for h in runner.hooks):
        runner.register_hook(PreemptionCheckpointHook(**settings))
