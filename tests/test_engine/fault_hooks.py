"""Faults and probes for the training-fault tests, as hooks a config can
import (``custom_imports``) in a training subprocess: a rank that dies, a
checkpoint write that is killed halfway, a recorder of lr and momentum."""
import json
import os
import signal

from mmengine.fileio.backends import LocalBackend
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class KillRankHook(Hook):
    """SIGKILL the process of ``rank`` as iteration ``at_iter`` (1-based)
    starts."""

    def __init__(self, rank: int = 1, at_iter: int = 2) -> None:
        self.rank, self.at_iter = rank, at_iter

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.rank == self.rank and runner.iter + 1 == self.at_iter:
            os.kill(os.getpid(), signal.SIGKILL)


@HOOKS.register_module()
class KillDuringWriteHook(Hook):
    """SIGKILL the process halfway through writing the file whose name
    contains ``name``: half its bytes on disk, flushed, then the kill."""

    def __init__(self, name: str) -> None:
        self.name = name

    def before_train(self, runner) -> None:
        put, name = LocalBackend.put, self.name

        def dying_put(backend, obj, filepath):
            if name not in str(filepath):
                return put(backend, obj, filepath)
            with open(filepath, 'wb') as f:
                f.write(obj[:len(obj) // 2])
                f.flush()
                os.fsync(f.fileno())
            os.kill(os.getpid(), signal.SIGKILL)

        LocalBackend.put = dying_put


@HOOKS.register_module()
class RecordScheduleHook(Hook):
    """Record the lr and target momentum each iteration trains with, and
    write them to ``{work_dir}/schedule_<iter at start>.json`` when training
    ends or stops."""

    priority = 'VERY_LOW'

    def __init__(self) -> None:
        self.records = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
        target = getattr(model, 'target', None)
        momentum = target.current_momentum() if target is not None else None
        self.records.append(
            dict(
                iter=runner.iter,
                lr=runner.optim_wrapper.get_lr()['lr'][0],
                momentum=momentum))

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        path = os.path.join(runner.work_dir,
                            f'schedule_{self.records[0]["iter"]}.json')
        with open(path, 'w') as f:
            json.dump(self.records, f)


@HOOKS.register_module()
class HangRankHook(Hook):
    """Make ``rank`` stop answering (sleep ``seconds``) as iteration
    ``at_iter`` (1-based) starts."""

    def __init__(self,
                 rank: int = 1,
                 at_iter: int = 2,
                 seconds: float = 300) -> None:
        self.rank, self.at_iter, self.seconds = rank, at_iter, seconds

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.rank == self.rank and runner.iter + 1 == self.at_iter:
            import time
            time.sleep(self.seconds)


@HOOKS.register_module()
class SignalSelfHook(Hook):
    """Send the signal ``name`` to this process after iteration ``at_iter``
    (1-based), as a scheduler would; refuse to when no handler is installed
    (the signal would end the test process instead)."""

    priority = 'VERY_HIGH'

    def __init__(self, name: str = 'SIGTERM', at_iter: int = 3) -> None:
        self.signal, self.at_iter = signal.Signals[name], at_iter

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        if runner.iter + 1 != self.at_iter:
            return
        if signal.getsignal(self.signal) in (signal.SIG_DFL, None):
            raise AssertionError(
                f'no {self.signal.name} handler during training')
        os.kill(os.getpid(), self.signal)
