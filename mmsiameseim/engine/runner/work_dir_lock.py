"""One training run writes into a work dir at a time.

The lock is a file, ``WORK_DIR/.train.lock``, created with ``O_CREAT |
O_EXCL`` (atomic on local file systems and on the shared ones clusters use:
NFS v3+, Lustre, GPFS, where ``flock`` is not to be trusted). It names the
holder (host, pid, start time, command). While the run lives, a daemon
thread touches the file every ``heartbeat_s`` seconds.

A lock left by a run that died is not stuck: on the same host it is stale
as soon as its pid is gone; from another host (the file system is shared)
once its heartbeat is older than ``stale_after_s``. A stale lock is taken
over and the log says whose it was.

``FaultTolerantRunner`` takes the lock (:func:`lock_work_dir`; settings:
the config's ``work_dir_lock = dict(...)``, None to leave it out) before it
looks at the work dir's checkpoints, and releases it when training ends.
"""
import json
import os
import os.path as osp
import socket
import sys
import threading
import time
from typing import Optional

from mmengine.dist import broadcast_object_list

from .refused_run import RunRefused

LOCK_NAME = '.train.lock'


class WorkDirLocked(RuntimeError):
    """Another live run holds the work dir."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class WorkDirLock:
    """The lock of one work dir (see the module's docstring).

    Args:
        work_dir (str): The folder to lock (created when missing).
        heartbeat_s (float): Seconds between touches of the lock file.
            Defaults to 30.
        stale_after_s (float): A lock of another host whose last touch is
            older than this is a dead run's. Defaults to 300.
    """

    def __init__(self,
                 work_dir: str,
                 heartbeat_s: float = 30.,
                 stale_after_s: float = 300.) -> None:
        if not 0 < heartbeat_s < stale_after_s:
            raise ValueError(
                f'work_dir_lock: heartbeat_s ({heartbeat_s}) must be > 0 and '
                f'below stale_after_s ({stale_after_s})')
        self.path = osp.join(work_dir, LOCK_NAME)
        self.heartbeat_s = heartbeat_s
        self.stale_after_s = stale_after_s
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._held = False

    def acquire(self) -> Optional[str]:
        """Take the lock; returns a line for the log when a dead run's lock
        was taken over.

        Raises:
            WorkDirLocked: a live run holds it (the message names it).
            OSError: the work dir cannot be written (the error names the
                lock file).
        """
        os.makedirs(osp.dirname(self.path), exist_ok=True)
        note = None
        for _ in range(3):
            if self._create():
                break
            holder, age = self._read()
            stale = self._stale_reason(holder, age)
            if stale is None:
                raise WorkDirLocked(self._busy_message(holder, age))
            note = (f'{self.path}: taking over the lock of a run that is '
                    f'gone ({stale})')
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass
        else:
            raise WorkDirLocked(f'{self.path}: could not take the lock '
                                '(other runs took it in turn)')
        self._held = True
        self._thread = threading.Thread(
            target=self._beat, name='work-dir-lock', daemon=True)
        self._thread.start()
        return note

    def release(self) -> None:
        """Stop the heartbeat and remove the lock file (when it is ours)."""
        if not self._held:
            return
        self._held = False
        self._stop.set()
        holder, _ = self._read()
        if holder.get('pid') == os.getpid() and \
                holder.get('host') == socket.gethostname():
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass

    def _create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY,
                         0o644)
        except FileExistsError:
            return False
        except OSError as error:
            raise OSError(
                error.errno, f'cannot write the work dir lock {self.path}: '
                f'{error.strerror}') from error
        holder = dict(
            host=socket.gethostname(),
            pid=os.getpid(),
            started=time.strftime('%Y-%m-%d %H:%M:%S'),
            command=' '.join(sys.argv))
        with os.fdopen(fd, 'w') as f:
            json.dump(holder, f)
            f.flush()
            os.fsync(f.fileno())
        return True

    def _read(self):
        """The holder's record ({} when unreadable) and the seconds since
        the last heartbeat."""
        try:
            age = time.time() - os.stat(self.path).st_mtime
            with open(self.path) as f:
                return json.load(f), age
        except (OSError, ValueError):
            return {}, 0.

    def _stale_reason(self, holder: dict, age: float) -> Optional[str]:
        pid, host = holder.get('pid'), holder.get('host')
        if not isinstance(pid, int) or not host:
            # cut by a crash while written; a live writer fills it at once
            return ('an unreadable lock file'
                    if age > self.heartbeat_s else None)
        if host == socket.gethostname():
            if not _alive(pid):
                return f'pid {pid} on {host} has exited'
            return None
        if age > self.stale_after_s:
            return (f'pid {pid} on {host}, no heartbeat for {age:.0f} s '
                    f'(more than {self.stale_after_s:.0f} s)')
        return None

    def _busy_message(self, holder: dict, age: float) -> str:
        who = (f'pid {holder.get("pid")} on {holder.get("host")}, started '
               f'{holder.get("started")} ({holder.get("command")})'
               if holder else 'a run whose lock is being written')
        return (
            f'{osp.dirname(self.path)} is being trained into by another run: '
            f'{who}, alive {age:.0f} s ago (lock {self.path}). Two runs in '
            'one work dir replace each other\'s checkpoints. Wait for it, '
            'stop it, or train into another --work-dir. A lock of a run '
            'that died is taken over by itself (same host: at once; another '
            f'host: after {self.stale_after_s:.0f} s without a heartbeat).')

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                os.utime(self.path)
            except OSError:
                pass  # the next beat retries


def lock_work_dir(runner) -> None:
    """Take ``runner``'s work dir lock on rank 0 (settings: the config's
    ``work_dir_lock``; held as ``runner._lock`` until
    :func:`unlock_work_dir`); every rank stops, with :class:`RunRefused`,
    when a live run holds it."""
    settings = runner.cfg.get('work_dir_lock', dict())
    if settings is None:
        return
    refusal = [None]
    if runner.rank == 0:
        runner._lock = WorkDirLock(runner.work_dir, **settings)
        try:
            note = runner._lock.acquire()
            if note:
                runner.logger.warning(note)
        except WorkDirLocked as error:
            runner._lock = None
            refusal = [str(error)]
    if runner.distributed:
        broadcast_object_list(refusal, src=0)
    if refusal[0]:
        raise RunRefused(refusal[0])


def unlock_work_dir(runner) -> None:
    """Release the lock :func:`lock_work_dir` took, if any."""
    if runner._lock is not None:
        runner._lock.release()
        runner._lock = None
