"""Wall time summed over the invocations of one work dir: a demo killed and
rerun (it resumes) records the time of every invocation, not only the
last one."""
import datetime
import os
import os.path as osp
import threading
import time
from typing import List

from mmsiameseim.atomic_io import atomic_json, load_json


class WallTimeLedger:
    """A JSON file of the wall time of each invocation that worked in one
    folder, kept current while the invocation runs.

    On entry, an invocation is added to the file; while it runs, a
    background thread writes its elapsed time every ``interval`` seconds,
    and once more on exit (an exception or Ctrl-C included). A process
    killed outright loses at most the last ``interval`` seconds.

    Args:
        path (str): The JSON file (``{"invocations": [{"started": ...,
            "wall_s": ...}, ...]}``).
        interval (float): Seconds between writes. Defaults to 5.
    """

    def __init__(self, path: str, interval: float = 5.) -> None:
        self.path = path
        self.interval = interval
        self.earlier = self.read(path)
        self.started = None
        self._t0 = None
        self._final = None
        self._stop = threading.Event()
        self._thread = None

    @staticmethod
    def read(path: str) -> List[dict]:
        """The invocations recorded in ``path`` ([] when there is none)."""
        ledger = load_json(path)
        if ledger is None:
            return []
        if not isinstance(ledger, dict) or not isinstance(
                ledger.get('invocations'), list):
            raise ValueError(
                f'{path}: not a wall-time ledger (expected '
                '{"invocations": [...]}); delete it to start the count anew')
        return ledger['invocations']

    def elapsed(self) -> float:
        """This invocation's seconds so far (0 before it starts; fixed once
        it ends)."""
        if self._final is not None:
            return self._final
        return 0. if self._t0 is None else time.monotonic() - self._t0

    def invocations(self) -> List[dict]:
        """Every invocation, this one last with its time so far."""
        now = [dict(started=self.started, wall_s=round(self.elapsed(), 3))
               ] if self.started else []
        return self.earlier + now

    def total_s(self) -> float:
        """The wall time of every invocation, summed."""
        return sum(i['wall_s'] for i in self.invocations())

    def write(self) -> None:
        atomic_json(self.path, dict(invocations=self.invocations()))

    def _keep_writing(self) -> None:
        while not self._stop.wait(self.interval):
            self.write()

    def __enter__(self) -> 'WallTimeLedger':
        self.started = datetime.datetime.now().astimezone().isoformat(
            timespec='seconds')
        self._t0 = time.monotonic()
        os.makedirs(osp.dirname(osp.abspath(self.path)), exist_ok=True)
        self.write()
        self._thread = threading.Thread(
            target=self._keep_writing, name='wall-time-ledger', daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._final = self.elapsed()
        self.write()
