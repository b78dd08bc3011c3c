"""What a person does at a terminal to a training run: a second run into the
same work dir, Ctrl-C, killing ``mim train`` (the process they see). Real
processes through mim / mmpretrain's tools/train.py on the shrunk
Fashion-MNIST config (5 iterations an epoch)."""
import errno
import json
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
from mmengine.config import Config
from mmengine.registry import RUNNERS

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.checkpoint_files import checkpoint_damage
from mmsiameseim.engine.runner import RunRefused
from mmsiameseim.engine.runner.work_dir_lock import LOCK_NAME, WorkDirLock
from tests.helpers import ROOT

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
TRAIN = osp.join(
    osp.dirname(__import__('mmpretrain').__file__), '.mim', 'tools',
    'train.py')
ITERATION = re.compile(r'Epoch\(train\)\s+\[(\d+)\]\[\s*(\d+)/5\]')


def _env():
    return dict(
        os.environ,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))


def _start(command, **kwargs):
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
        **kwargs)


def _train_command(work_dir, epochs, *extra):
    return [
        sys.executable, TRAIN, TINY, '--work-dir',
        str(work_dir), '--cfg-options', f'train_cfg.max_epochs={epochs}',
        *extra
    ]


def _read_until(run, pattern, output):
    """Lines of ``run`` into ``output`` until one matches ``pattern``."""
    for line in run.stdout:
        output.append(line)
        if re.search(pattern, line):
            return line
    raise AssertionError(''.join(output)[-3000:])


def _cfg(work_dir, epochs=1, **options):
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(work_dir)
    cfg.train_cfg.max_epochs = epochs
    cfg.merge_from_dict(options)
    return cfg


@pytest.mark.person_matrix(
    'train', 'second_writer', 'a second run into a work dir a live run '
    'trains into is refused before its first step, naming the pid, host and '
    'command; nothing written; the first run trains on')
@pytest.mark.person_matrix(
    'resume', 'second_writer', '--resume beside the live run is refused the '
    'same way; after that run stops, --resume continues it')
def test_a_second_run_into_a_live_work_dir_is_refused(tmp_path):
    first = _start(_train_command(tmp_path, 200))
    output = []
    try:
        _read_until(first, r'Epoch\(train\)\s+\[1\]\[\s*2/5\]', output)
        lock = json.loads((tmp_path / LOCK_NAME).read_text())
        assert lock['pid'] == first.pid
        folders = [p for p in tmp_path.iterdir() if p.is_dir()]
        for options in (dict(resume=True), dict(overwrite=True)):
            with pytest.raises(RunRefused) as refused:
                RUNNERS.build(_cfg(tmp_path, 200, **options)).train()
            message = str(refused.value)
            assert f'pid {first.pid} on {socket.gethostname()}' in message
            assert 'tools/train.py' in message and '--work-dir' in message
            # the refused run's own log folder is gone again
            assert [p for p in tmp_path.iterdir() if p.is_dir()] == folders
        first.send_signal(signal.SIGTERM)
        output.extend(first.stdout)
        assert first.wait(timeout=120) == 143, ''.join(output)[-3000:]
    finally:
        first.kill()
    assert not (tmp_path / LOCK_NAME).exists()
    done = int(
        re.search(r'stopped after iteration (\d+)', ''.join(output)).group(1))
    runner = RUNNERS.build(_cfg(tmp_path, (done + 4) // 5 + 1, resume=True))
    runner.train()
    assert runner.iter == 5 * ((done + 4) // 5 + 1)
    assert not (tmp_path / LOCK_NAME).exists()


@pytest.mark.person_matrix(
    'train', 'second_writer', 'the lock of a run that died (SIGKILL) is '
    'taken over at once on the same host, and the log says whose it was')
def test_a_dead_runs_lock_is_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, '-c', 'pass'])
    dead.wait()
    tmp_path.joinpath(LOCK_NAME).write_text(
        json.dumps(
            dict(
                host=socket.gethostname(),
                pid=dead.pid,
                started='earlier',
                command='tools/train.py')))
    runner = RUNNERS.build(_cfg(tmp_path))
    runner.train()
    assert runner.iter == 5
    assert not (tmp_path / LOCK_NAME).exists()
    log = open(osp.join(runner.log_dir, f'{runner.timestamp}.log')).read()
    assert f'taking over the lock of a run that is gone (pid {dead.pid}' \
        in log


@pytest.mark.person_matrix(
    'launch', 'second_writer', 'a lock written from another node (shared '
    'file system) is refused while its heartbeat is fresh and taken over '
    'once it is older than stale_after_s')
def test_another_hosts_lock_follows_its_heartbeat(tmp_path):
    lock = tmp_path / LOCK_NAME
    lock.write_text(
        json.dumps(
            dict(host='node-17', pid=4242, started='t', command='train')))
    with pytest.raises(RunRefused, match='pid 4242 on node-17'):
        RUNNERS.build(_cfg(tmp_path)).train()
    assert lock.exists()
    old = time.time() - 301
    os.utime(lock, (old, old))
    runner = RUNNERS.build(_cfg(tmp_path))
    runner.train()
    assert runner.iter == 5


def test_the_heartbeat_touches_the_lock_and_release_removes_it(tmp_path):
    lock = WorkDirLock(str(tmp_path), heartbeat_s=0.1, stale_after_s=1)
    assert lock.acquire() is None
    path = tmp_path / LOCK_NAME
    old = time.time() - 100
    os.utime(path, (old, old))
    time.sleep(0.5)
    assert time.time() - path.stat().st_mtime < 5
    lock.release()
    assert not path.exists()
    with pytest.raises(ValueError, match='heartbeat_s'):
        WorkDirLock(str(tmp_path), heartbeat_s=10, stale_after_s=5)


@pytest.mark.person_matrix(
    'train', 'ctrl_c', 'Ctrl-C to the whole process group (DataLoader '
    'workers too): the iteration finishes, iter_N.pth is written, exit 130; '
    '--resume trains the rest')
def test_ctrl_c_saves_a_checkpoint_like_sigterm(tmp_path):
    # two persistent workers, as in the shipped configs: Ctrl-C reaches them
    workers = [
        'train_dataloader.num_workers=2',
        'train_dataloader.persistent_workers=True'
    ]
    command = _train_command(tmp_path, 4) + workers
    run = _start(command, start_new_session=True)
    output = []
    try:
        _read_until(run, r'Epoch\(train\)\s+\[1\]\[\s*2/5\]', output)
        os.killpg(run.pid, signal.SIGINT)
        output.extend(run.stdout)
        assert run.wait(timeout=120) == 130, ''.join(output)[-3000:]
    finally:
        run.kill()
    log = ''.join(output)
    assert 'Traceback' not in log, log[-3000:]
    stop = re.search(
        r'SIGINT received: stopped after iteration (\d+) of 20 .* saved '
        r'(\S+); exiting with status 130', log)
    assert stop, log[-3000:]
    assert checkpoint_damage(stop.group(2)) is None
    resumed = subprocess.run(
        command + ['--resume'],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    trained = [(int(e) - 1) * 5 + int(i)
               for e, i in ITERATION.findall(resumed.stdout + resumed.stderr)]
    assert trained == list(range(int(stop.group(1)) + 1, 21))


@pytest.mark.person_matrix(
    'train', 'killed_launcher', '`kill <pid of mim train>`: train.py sees '
    'its launcher gone, saves iter_N.pth and exits; no orphan keeps writing')
def test_killing_mim_train_leaves_no_orphan(tmp_path):
    mim = osp.join(osp.dirname(sys.executable), 'mim')
    launcher = _start([
        mim, 'train', 'mmpretrain', TINY, '--work-dir',
        str(tmp_path), '--cfg-options', 'train_cfg.max_epochs=200'
    ])
    output = []
    try:
        _read_until(launcher, r'Epoch\(train\)\s+\[1\]\[\s*2/5\]', output)
        trainer = json.loads((tmp_path / LOCK_NAME).read_text())['pid']
        assert trainer != launcher.pid
        launcher.send_signal(signal.SIGTERM)  # what `kill PID` sends
        assert launcher.wait(timeout=30) == -signal.SIGTERM
        output.extend(launcher.stdout)  # the orphan still writes here
        deadline = time.monotonic() + 60
        while osp.exists(f'/proc/{trainer}') and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not osp.exists(f'/proc/{trainer}'), 'train.py trains on'
    finally:
        launcher.kill()
    log = ''.join(output)
    stop = re.search(
        rf'the launcher \(pid {launcher.pid}\) that started this process is '
        r'gone \(SIGTERM\): stopped after iteration (\d+) .* saved (\S+);',
        log)
    assert stop, log[-3000:]
    assert int(stop.group(1)) < 1000
    assert checkpoint_damage(stop.group(2)) is None
    assert (tmp_path / 'last_checkpoint').read_text() == stop.group(2)
    assert not (tmp_path / LOCK_NAME).exists()
    saved = torch.load(stop.group(2), weights_only=True)['meta']['iter']
    assert saved == int(stop.group(1))


class _FullDisk:
    """LocalBackend.put that writes half the bytes of the checkpoint of
    iteration ``at`` and fails as a full disk does."""

    def __init__(self, at):
        self.at = at

    def __enter__(self):
        from mmengine.fileio.backends import LocalBackend
        self.put, at = LocalBackend.put, self.at

        def full_put(backend, obj, filepath):
            if f'iter_{at}.pth' not in str(filepath):
                return self.put(backend, obj, filepath)
            with open(filepath, 'wb') as f:
                f.write(obj[:len(obj) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        LocalBackend.put = full_put
        return self

    def __exit__(self, *exc):
        from mmengine.fileio.backends import LocalBackend
        LocalBackend.put = self.put


@pytest.mark.person_matrix(
    'train', 'disk', 'a full disk during a checkpoint write: the error names '
    'the checkpoint, the free space and the newest intact checkpoint; no '
    'partial file, older checkpoints and last_checkpoint intact; --resume '
    'continues')
def test_a_full_disk_names_the_checkpoint_and_keeps_the_older_ones(tmp_path):
    runner = RUNNERS.build(_cfg(tmp_path, 2))
    with _FullDisk(at=6), pytest.raises(OSError) as failed:
        runner.train()
    message = str(failed.value)
    assert failed.value.errno == errno.ENOSPC
    assert f'cannot write the checkpoint {tmp_path / "iter_6.pth"}: No ' \
        'space left on device (' in message, message
    assert 'MiB free in' in message
    # the epoch checkpoint after iteration 5 is the newest
    assert f'newest: {tmp_path / "epoch_1.pth"}' in message, message
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert not [n for n in names if 'partial' in n or n == 'iter_6.pth']
    assert (tmp_path / 'last_checkpoint').read_text() == \
        str(tmp_path / 'epoch_1.pth')
    for name in names:
        if name.endswith('.pth'):
            assert checkpoint_damage(str(tmp_path / name)) is None
    assert not (tmp_path / LOCK_NAME).exists()
    resumed = RUNNERS.build(_cfg(tmp_path, 2, resume=True))
    resumed.train()
    assert resumed.iter == 10


@pytest.mark.person_matrix(
    'train', 'disk', 'a work dir that cannot be created (a file in its '
    'path) is named before training')
def test_an_unwritable_work_dir_is_named(tmp_path):
    (tmp_path / 'file').write_text('not a folder')
    work_dir = tmp_path / 'file' / 'run'
    with pytest.raises(OSError, match=str(work_dir)):
        RUNNERS.build(_cfg(work_dir)).train()
