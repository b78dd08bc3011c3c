"""The documented multi-process launch on a CPU-only machine:
``torchrun --nproc_per_node 2 tools/train.py CONFIG --launcher pytorch``
trains with gloo, a SIGKILLed rank stops the other within a bounded time
with a message naming it, and SIGTERM to the launcher stops every rank
after the same iteration with one checkpoint."""
import glob
import os
import os.path as osp
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.checkpoint_files import checkpoint_damage
from tests.helpers import ROOT

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
TRAIN = osp.join(
    osp.dirname(__import__('mmpretrain').__file__), '.mim', 'tools',
    'train.py')
TORCHRUN = osp.join(osp.dirname(sys.executable), 'torchrun')

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(), reason='the CPU-only (gloo) path')


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _torchrun(config, work_dir, *extra):
    return [
        TORCHRUN, '--nproc_per_node', '2', '--master_port',
        str(_free_port()), TRAIN, config, '--launcher', 'pytorch',
        '--work-dir',
        str(work_dir), *extra
    ]


def _env():
    return dict(
        os.environ,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
        OMP_NUM_THREADS='1')


def _with_hook(tmp_path, hook):
    path = tmp_path / 'fault.py'
    path.write_text(
        f'_base_ = [{TINY!r}]\n'
        "custom_imports = dict(imports=['mmsiameseim', "
        "'tests.test_engine.fault_hooks'], allow_failed_imports=False)\n"
        f'custom_hooks = [{hook}]\n')
    return str(path)


@pytest.mark.fault_matrix(
    'launch', 'signal', 'torchrun --nproc_per_node 2 --launcher pytorch '
    'trains on CPU (gloo)')
def test_two_cpu_ranks_train_through_torchrun(tmp_path):
    out = subprocess.run(
        _torchrun(TINY, tmp_path),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300)
    log = out.stdout + out.stderr
    assert out.returncode == 0, log[-3000:]
    # 40 images over 2 ranks at 8 a batch: 3 iterations an epoch
    assert re.search(r'Epoch\(train\) \[1\]\[3/3\]', log), log[-3000:]
    # the environment dump goes to the log file only (console_filter.py)
    (log_file, ) = glob.glob(str(tmp_path / '*' / '*.log'))
    with open(log_file) as f:
        assert 'Distributed training: True' in f.read()
    assert checkpoint_damage(str(tmp_path / 'epoch_1.pth')) is None


@pytest.mark.fault_matrix(
    'launch', 'signal', 'a SIGKILLed rank stops the others at once with '
    'a message naming it; no hang')
def test_a_killed_rank_stops_the_other_naming_it(tmp_path):
    config = _with_hook(tmp_path, "dict(type='KillRankHook', rank=1, "
                        'at_iter=2)')
    start = time.monotonic()
    out = subprocess.run(
        _torchrun(config, tmp_path),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300)
    wall = time.monotonic() - start
    log = out.stdout + out.stderr
    assert out.returncode != 0
    assert re.search(
        r'rank 0: stopping at iteration 2: rank 1 \(pid \d+\) '
        'died', log), log[-3000:]
    # far below the config's 600 s collective timeout: nothing waited on it
    assert wall < 200, wall


def _preempt_through_torchrun(tmp_path):
    """torchrun over 6 epochs of 3 iterations, SIGTERM to torchrun (which
    forwards it to every rank) once iteration 2 is logged."""
    cmd = _torchrun(TINY, tmp_path, '--cfg-options', 'train_cfg.max_epochs=6')
    run = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env())
    output, sent = [], False
    for line in run.stdout:
        output.append(line)
        if not sent and re.search(r'Epoch\(train\) \[1\]\[2/3\]', line):
            run.send_signal(signal.SIGTERM)
            sent = True
    run.wait(timeout=120)
    return cmd, run.returncode, ''.join(output)


@pytest.mark.fault_matrix(
    'launch', 'signal', 'SIGTERM to torchrun: every rank stops after the '
    'same iteration, one checkpoint, no rank errors')
def test_sigterm_to_the_launcher_stops_every_rank_with_one_checkpoint(
        tmp_path):
    _, code, log = _preempt_through_torchrun(tmp_path)
    assert code != 0
    stops = re.findall(
        r'SIGTERM received: stopped after iteration (\d+) of '
        r'18 .* saved (\S+);', log)
    assert len(stops) == 1, log[-3000:]  # logged once, by rank 0
    path = stops[0][1]
    assert checkpoint_damage(path) is None
    assert (tmp_path / 'last_checkpoint').read_text() == path
    # the ranks agreed: none was left waiting in a collective
    assert 'stopping at iteration' not in log
    assert 'Connection reset' not in log and 'Connection closed' not in log


@pytest.mark.slow
@pytest.mark.fault_matrix(
    'launch', 'signal', 'after SIGTERM to torchrun, torchrun ... --resume '
    'finishes the run')
def test_sigterm_to_the_launcher_then_resume(tmp_path):
    cmd, _, log = _preempt_through_torchrun(tmp_path)
    done = int(re.findall(r'stopped after iteration (\d+)', log)[0])
    resumed = subprocess.run(
        cmd + ['--resume'],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300)
    log = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0, log[-3000:]
    assert f'resumed epoch: {done // 3}, iter: {done}' in log
    assert re.search(r'Epoch\(train\) \[6\]\[3/3\]', log)


@pytest.mark.slow
@pytest.mark.fault_matrix(
    'launch', 'signal', 'a rank that hangs: the others stop after '
    'env_cfg.dist_cfg.timeout seconds')
def test_a_hung_rank_is_bounded_by_the_timeout(tmp_path):
    config = _with_hook(
        tmp_path, "dict(type='HangRankHook', rank=1, "
        'at_iter=2, seconds=300)')
    start = time.monotonic()
    out = subprocess.run(
        _torchrun(config, tmp_path, '--cfg-options',
                  'env_cfg.dist_cfg.timeout=20'),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=400)
    log = out.stdout + out.stderr
    assert out.returncode != 0
    assert 'rank 0: stopping at iteration 2' in log, log[-3000:]
    assert time.monotonic() - start < 200


def _parent(pid):
    """The parent pid of ``pid`` (None once it is gone)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(')', 1)[1].split()[1])
    except OSError:
        return None


def _trainers(work_dir):
    """The pids of the processes training into ``work_dir``."""
    pids = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmdline = f.read().split(b'\0')
        except OSError:
            continue
        if str(work_dir).encode() in cmdline and TRAIN.encode() in cmdline \
                and TORCHRUN.encode() not in cmdline[:2]:
            pids.append(int(pid))
    return pids


@pytest.mark.person_matrix(
    'launch', 'killed_launcher', 'torchrun SIGKILLed: every rank sees its '
    'launcher gone, all stop after the same iteration with one checkpoint; '
    'no orphan rank')
def test_a_killed_torchrun_leaves_no_orphan_rank(tmp_path):
    run = subprocess.Popen(
        _torchrun(TINY, tmp_path, '--cfg-options', 'train_cfg.max_epochs=200'),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env())
    output = []
    for line in run.stdout:
        output.append(line)
        if re.search(r'Epoch\(train\)\s+\[1\]\[2/3\]', line):
            break
    # the ranks are torchrun's children; a process a rank forks shows the
    # rank's command line until it execs (a subprocess it starts, say)
    ranks = [pid for pid in _trainers(tmp_path) if _parent(pid) == run.pid]
    assert len(ranks) == 2, (ranks, _trainers(tmp_path))
    run.kill()  # SIGKILL: torchrun cannot forward anything
    run.wait(timeout=30)
    output.extend(run.stdout)  # the ranks still write to the pipe
    deadline = time.monotonic() + 120
    while _trainers(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _trainers(tmp_path), 'a rank trains on as an orphan'
    log = ''.join(output)
    stops = re.findall(
        r'the launcher \(pid \d+\) that started this process is gone '
        r'\(SIGTERM\): stopped after iteration (\d+) of 600 .* saved (\S+);',
        log)
    assert len(stops) == 1, log[-3000:]  # logged once, by rank 0
    assert checkpoint_damage(stops[0][1]) is None
    assert (tmp_path / 'last_checkpoint').read_text() == stops[0][1]
