"""Preemption: SIGTERM (or slurm's --signal SIGUSR1) finishes the current
iteration, writes iter_N.pth, logs it and exits 128 + signal; --resume then
trains exactly the iterations left. Through mmpretrain's tools/train.py in a
subprocess (the real signal delivery), and in-process for the hook's
options."""
import os
import os.path as osp
import re
import signal
import subprocess
import sys
import time

import pytest
import torch
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.registry import RUNNERS

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.checkpoint_files import checkpoint_damage
from mmsiameseim.engine.hooks import PreemptionCheckpointHook
from tests.helpers import ROOT
from tests.test_engine.fault_hooks import SignalSelfHook

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
TRAIN = osp.join(
    osp.dirname(__import__('mmpretrain').__file__), '.mim', 'tools',
    'train.py')
EPOCHS = 4  # 20 iterations: the signal arrives long before the end


def _command(work_dir, *extra):
    return [
        sys.executable, TRAIN, TINY, '--work-dir',
        str(work_dir), '--cfg-options', f'train_cfg.max_epochs={EPOCHS}',
        *extra
    ]


def _env():
    return dict(
        os.environ,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))


@pytest.mark.fault_matrix(
    'train', 'signal', 'SIGTERM: the iteration finishes, iter_N.pth is '
    'written and logged, exit status 143')
@pytest.mark.fault_matrix(
    'resume', 'signal', '--resume after SIGTERM trains exactly the '
    'iterations left, to the uninterrupted weights')
def test_sigterm_saves_a_checkpoint_and_resume_trains_the_rest(tmp_path):
    run = subprocess.Popen(
        _command(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env())
    output, sent = [], None
    for line in run.stdout:
        output.append(line)
        if sent is None and re.search(r'Epoch\(train\) \[1\]\[\s*2/5\]', line):
            run.send_signal(signal.SIGTERM)
            sent = time.monotonic()
    assert run.wait(
        timeout=120) == 128 + signal.SIGTERM, ''.join(output)[-3000:]
    log = ''.join(output)
    stop = re.search(
        r'SIGTERM received: stopped after iteration (\d+) of '
        rf'{5 * EPOCHS} .* saved (\S+); exiting with status 143', log)
    assert stop, log[-3000:]
    done, path = int(stop.group(1)), stop.group(2)
    assert done < 5 * EPOCHS and path == str(tmp_path / f'iter_{done}.pth')
    assert checkpoint_damage(path) is None
    assert (tmp_path / 'last_checkpoint').read_text() == path
    assert not [p for p in os.listdir(tmp_path) if p.endswith('.partial')]

    resumed = subprocess.run(
        _command(tmp_path, '--resume'),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    trained = re.findall(r'Epoch\(train\) \[(\d+)\]\[\s*(\d+)/5\]',
                         resumed.stdout + resumed.stderr)
    iterations = [(int(e) - 1) * 5 + int(i) for e, i in trained]
    assert iterations == list(range(done + 1, 5 * EPOCHS + 1))

    straight = Config.fromfile(TINY)
    straight.work_dir = str(tmp_path / 'straight')
    straight.train_cfg.max_epochs = EPOCHS
    runner = RUNNERS.build(straight)
    runner.train()
    final = torch.load(
        tmp_path / f'epoch_{EPOCHS}.pth', weights_only=True)['state_dict']
    for key, value in runner.model.state_dict().items():
        torch.testing.assert_close(
            final[key],
            value,
            rtol=0,
            atol=1e-5,
            msg=f'{key} differs after the resume')


def _cfg(work_dir, **options):
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(work_dir)
    cfg.train_cfg.max_epochs = EPOCHS
    cfg.merge_from_dict(options)
    return cfg


@pytest.mark.fault_matrix(
    'train', 'signal', "SIGUSR1 (slurm's --signal): checkpoint at the "
    'iteration, exit 138; handlers restored')
def test_sigusr1_in_the_middle_of_an_epoch(tmp_path):
    before = signal.getsignal(signal.SIGUSR1)
    runner = RUNNERS.build(_cfg(tmp_path))
    runner.register_hook(SignalSelfHook('SIGUSR1', 3))
    with pytest.raises(SystemExit) as stopped:
        runner.train()
    assert stopped.value.code == 128 + signal.SIGUSR1
    assert runner.iter == 2  # the loop's counter: 3 iterations done
    assert (tmp_path / 'last_checkpoint').read_text() == \
        str(tmp_path / 'iter_3.pth')
    meta = torch.load(tmp_path / 'iter_3.pth', weights_only=True)['meta']
    assert (meta['iter'], meta['epoch']) == (3, 0)
    assert signal.getsignal(signal.SIGUSR1) == before


def test_a_signal_on_a_regular_checkpoint_iteration_writes_it_once(tmp_path):
    runner = RUNNERS.build(_cfg(tmp_path, preemption=dict(exit_code=3)))
    saves = []
    runner.register_hook(SignalSelfHook('SIGTERM', 4))

    class _CountSaves(Hook):

        def before_save_checkpoint(self, runner, checkpoint):
            saves.append(checkpoint['meta']['iter'])

    runner.register_hook(_CountSaves())
    with pytest.raises(SystemExit) as stopped:
        runner.train()
    assert stopped.value.code == 3
    assert saves == [2, 4]  # iter_4.pth is the regular one, not rewritten


def test_without_an_iteration_checkpoint_hook_it_writes_its_own(tmp_path):
    cfg = _cfg(tmp_path, custom_hooks=[])
    runner = RUNNERS.build(cfg)
    runner.register_hook(SignalSelfHook('SIGTERM', 2))
    with pytest.raises(SystemExit):
        runner.train()
    assert (tmp_path / 'last_checkpoint').read_text() == \
        str(tmp_path / 'iter_2.pth')
    assert checkpoint_damage(str(tmp_path / 'iter_2.pth')) is None


def test_preemption_none_leaves_signals_alone(tmp_path):
    runner = RUNNERS.build(_cfg(tmp_path, preemption=None))
    assert not any(
        isinstance(h, PreemptionCheckpointHook) for h in runner.hooks)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="unknown signal 'SIGFOO'"):
        PreemptionCheckpointHook(signals=('SIGFOO', ))
    with pytest.raises(ValueError, match='interval must be >= 1'):
        PreemptionCheckpointHook(interval=0)
