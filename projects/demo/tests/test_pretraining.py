"""The demo's pretraining (``pretrain_once``) under the pretraining
configs' runner: preempted by SIGTERM, it leaves an iteration checkpoint,
and running it again resumes and finishes; a finished run is reused."""
import os.path as osp
import signal

import pytest
from mmengine.config import Config

import mmsiameseim  # noqa: F401
import tests.test_engine.fault_hooks  # noqa: F401 (registers the hooks)
from projects.demo import pretrain_once
from tests.helpers import ROOT

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')


def _cfg(work_dir, *hooks):
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(work_dir)
    cfg.custom_hooks = list(cfg.custom_hooks) + list(hooks)
    return cfg


@pytest.mark.fault_matrix(
    'demo', 'signal', 'SIGTERM during pretraining: iteration checkpoint '
    'and exit 143; the rerun resumes and finishes')
def test_a_preempted_pretraining_resumes_when_run_again(tmp_path):
    with pytest.raises(SystemExit) as stopped:
        pretrain_once(
            _cfg(tmp_path,
                 dict(type='SignalSelfHook', name='SIGTERM', at_iter=3)))
    assert stopped.value.code == 128 + signal.SIGTERM
    assert (tmp_path / 'last_checkpoint').read_text() == \
        str(tmp_path / 'iter_3.pth')
    assert not (tmp_path / 'pretrain_done.json').exists()
    done = pretrain_once(_cfg(tmp_path))
    assert done['resumed'] is True
    assert done['checkpoint'] == str(tmp_path / 'epoch_1.pth')
    assert osp.exists(done['initial_weights'])
    assert pretrain_once(_cfg(tmp_path)) == done  # reused, not retrained


@pytest.mark.person_matrix(
    'demo', 'second_writer', 'a demo (or its pretraining) refused by the '
    'lock of a live run in its work dir records no invocation: no wall-time '
    'ledger written, the live one untouched')
def test_a_run_refused_by_the_lock_records_no_invocation(tmp_path):
    from mmsiameseim.engine.runner import RunRefused
    from mmsiameseim.engine.runner.work_dir_lock import WorkDirLock
    from tests.helpers import load_tool
    lock = WorkDirLock(str(tmp_path))  # this live process holds it
    lock.acquire()
    try:
        with pytest.raises(RunRefused, match='pid'):
            pretrain_once(_cfg(tmp_path))
        assert not (tmp_path / 'pretrain_wall_time.json').exists()
        with pytest.raises(SystemExit, match='pid'):
            load_tool('projects/demo/tools/demo.py').main(
                ['--smoke', '--work-dir',
                 str(tmp_path)])
        assert not (tmp_path / 'wall_time.json').exists()
    finally:
        lock.release()
    done = pretrain_once(_cfg(tmp_path))  # once the lock is free
    assert done['invocations'] == 1
