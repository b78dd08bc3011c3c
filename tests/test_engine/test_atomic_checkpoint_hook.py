"""A kill in the middle of a checkpoint write (SIGKILL after half of its
bytes reached the disk, in a training subprocess of mmpretrain's
tools/train.py) never leaves a partial file under a checkpoint's name;
last_checkpoint names the newest complete one, the two older iteration
checkpoints are kept, and --resume continues from there (removing the
partial file)."""
import os
import os.path as osp
import signal
import subprocess
import sys

import pytest

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.checkpoint_files import (checkpoint_damage,
                                                 checkpoint_files,
                                                 partial_files)
from tests.helpers import ROOT

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
TRAIN = osp.join(
    osp.dirname(__import__('mmpretrain').__file__), '.mim', 'tools',
    'train.py')


def _config(tmp_path, kill_name=None):
    hooks = ("dict(type='StopOnNonFiniteLossHook', interval=1),\n"
             "    dict(type='CheckpointHook', by_epoch=False, interval=2,\n"
             '         save_last=False, max_keep_ckpts=2),\n')
    if kill_name:
        hooks += f"    dict(type='KillDuringWriteHook', name={kill_name!r}),\n"
    path = tmp_path / ('kill.py' if kill_name else 'plain.py')
    path.write_text(
        f'_base_ = [{TINY!r}]\n'
        "custom_imports = dict(imports=['mmsiameseim', "
        "'tests.test_engine.fault_hooks'], allow_failed_imports=False)\n"
        f'custom_hooks = [\n    {hooks}]\n'
        'train_cfg = dict(max_epochs=2)\n')
    return str(path)


def _train(config, work_dir, *extra):
    env = dict(
        os.environ,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run(
        [sys.executable, TRAIN, config, '--work-dir',
         str(work_dir), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=900)


@pytest.mark.fault_matrix(
    'train', 'mid_write', 'SIGKILL halfway through a checkpoint write: no '
    'partial file under a checkpoint name, '
    'last_checkpoint on the newest complete one')
@pytest.mark.fault_matrix(
    'resume', 'mid_write', '--resume after a kill mid-write continues from '
    'the newest complete checkpoint')
def test_a_kill_mid_write_leaves_only_complete_checkpoints(tmp_path):
    work_dir = tmp_path / 'run'
    killed = _train(_config(tmp_path, 'iter_6'), work_dir)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    # iteration checkpoints at 2 and 4, epoch_1 at 5, iter_6 killed
    names = sorted(osp.basename(p) for p in checkpoint_files(work_dir))
    assert names == ['epoch_1.pth', 'iter_2.pth', 'iter_4.pth']
    for path in checkpoint_files(work_dir):
        assert checkpoint_damage(path) is None, path
    assert (work_dir / 'last_checkpoint').read_text() == \
        str(work_dir / 'epoch_1.pth')
    partial = partial_files(work_dir)
    assert len(partial) == 1 and '.iter_6.pth.' in partial[0]
    assert checkpoint_damage(partial[0]) is not None  # it is half a file

    resumed = _train(_config(tmp_path), work_dir, '--resume')
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    log = resumed.stdout + resumed.stderr
    assert f'removed {partial[0]}' in log
    assert 'resumed epoch: 1, iter: 5' in log
    assert partial_files(work_dir) == []
    assert (work_dir / 'last_checkpoint').read_text() == \
        str(work_dir / 'epoch_2.pth')
    assert sorted(osp.basename(p) for p in checkpoint_files(work_dir)) == \
        ['epoch_1.pth', 'epoch_2.pth', 'iter_10.pth', 'iter_8.pth']
