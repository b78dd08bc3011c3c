"""WallTimeLedger: the wall time of a work dir summed over its invocations,
a killed one included (issue 37: a killed demo rerun counted only its last
invocation)."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from projects.demo import WallTimeLedger

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# a process that keeps a ledger until it is killed
KEEP_LEDGER = '''
import sys, time
from projects.demo import WallTimeLedger
with WallTimeLedger(sys.argv[1], interval=0.1):
    print('started', flush=True)
    time.sleep(600)
'''


def test_an_interrupted_invocation_is_counted(tmp_path):
    path = str(tmp_path / 'wall_time.json')
    with pytest.raises(KeyboardInterrupt):
        with WallTimeLedger(path):
            time.sleep(0.2)
            raise KeyboardInterrupt  # Ctrl-C
    first = WallTimeLedger.read(path)
    assert len(first) == 1 and first[0]['wall_s'] >= 0.2
    with WallTimeLedger(path) as clock:
        time.sleep(0.1)
    assert [i['wall_s'] for i in clock.invocations()][0] == first[0]['wall_s']
    assert len(clock.invocations()) == 2
    assert clock.total_s() == pytest.approx(
        sum(i['wall_s'] for i in WallTimeLedger.read(path)))
    assert clock.total_s() >= 0.3


@pytest.mark.person_matrix(
    'demo', 'checkout', 'a demo killed and rerun records the wall time of '
    'both invocations, summed, not only the last')
def test_a_killed_invocation_is_counted(tmp_path):
    path = str(tmp_path / 'wall_time.json')
    proc = subprocess.Popen([sys.executable, '-c', KEEP_LEDGER, path],
                            cwd=ROOT,
                            stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == 'started'
        time.sleep(1.0)
    finally:
        proc.send_signal(signal.SIGKILL)  # no exit handler runs
        proc.wait(timeout=30)
    killed = WallTimeLedger.read(path)
    assert len(killed) == 1
    assert 0.7 <= killed[0]['wall_s'] < 30  # within an interval of the kill
    with WallTimeLedger(path) as clock:
        pass
    assert len(clock.invocations()) == 2
    assert clock.total_s() >= killed[0]['wall_s']


def test_a_file_that_is_not_a_ledger_is_named(tmp_path):
    path = tmp_path / 'wall_time.json'
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(ValueError, match=f'{path}: not a wall-time ledger'):
        WallTimeLedger(str(path))
