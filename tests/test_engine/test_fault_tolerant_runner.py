"""FaultTolerantRunner (the pretraining configs' ``runner_type``): resume
checks what it resumes into, no silent overwrite, damaged checkpoints are
named, a finished run is extended on the schedule planned at the new length,
and every refusal leaves the work dir as it was.

The runner is built like mmpretrain's tools/train.py builds it
(``RUNNERS.build(cfg)`` on the config's ``runner_type``), on the shrunk
Fashion-MNIST config (5 iterations an epoch).
"""
import hashlib
import os
import os.path as osp
import shutil
import time

import pytest
import torch
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.registry import RUNNERS

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.checkpoint_files import checkpoint_damage
from mmsiameseim.engine.runner import FaultTolerantRunner, RunRefused
from tests.helpers import ROOT
from tests.test_engine.fault_hooks import RecordScheduleHook

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')


def _cfg(work_dir, resume=False, max_epochs=1, **options):
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(work_dir)
    cfg.resume = resume
    cfg.train_cfg.max_epochs = max_epochs
    cfg.merge_from_dict(options)
    return cfg


def _train(cfg, *hooks):
    # mmengine names a run's log folder by the second it started: two runs
    # of one work dir in one second would share it (the tiny runs here take
    # less than a second), so each starts in a second of its own
    time.sleep(1 - time.time() % 1)
    runner = RUNNERS.build(cfg)
    assert isinstance(runner, FaultTolerantRunner)
    for hook in hooks:
        runner.register_hook(hook)
    runner.train()
    return runner


def _snapshot(folder):
    """Every file under ``folder``: size, modification time, content."""
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = osp.join(root, name)
            with open(path, 'rb') as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            files[osp.relpath(path,
                              folder)] = (osp.getsize(path),
                                          os.stat(path).st_mtime_ns, digest)
    return files


class _Crash(Exception):
    pass


class _CrashAfter(Hook):
    """Stops the run like a kill, after iteration ``n`` (1-based)."""
    priority = 'LOWEST'

    def __init__(self, n):
        self.n = n

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        if runner.iter + 1 == self.n:
            raise _Crash


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    """A finished 1-epoch run: epoch_1.pth, iter_2.pth, iter_4.pth."""
    work_dir = tmp_path_factory.mktemp('finished')
    _train(_cfg(work_dir))
    return work_dir


def _copy(src, tmp_path):
    dst = tmp_path / 'run'
    shutil.copytree(src, dst)
    # last_checkpoint holds absolute paths: point it into the copy
    (dst / 'last_checkpoint').write_text(str(dst / 'epoch_1.pth'))
    return dst


@pytest.mark.fault_matrix(
    'resume', 'architecture', 'another width or depth is refused before the '
    'first step, naming keys and both shapes; nothing '
    'written')
@pytest.mark.parametrize('change,expected', [
    (dict(dims=64), [
        'backbone.layers.0.attn.qkv.weight: checkpoint (96, 32), '
        'model (192, 64)',
        'optimizer state exp_avg of backbone.layers.0.attn.qkv.weight: '
        'checkpoint (96, 32), parameter (192, 64)'
    ]),
    (dict(depth=3), [
        'model tensors are not in the checkpoint: backbone.layers.2.',
        'param groups, this config builds'
    ]),
])
def test_resume_into_another_model_is_refused(finished, tmp_path, change,
                                              expected):
    work_dir = _copy(finished, tmp_path)
    before = _snapshot(work_dir)
    cfg = _cfg(work_dir, resume=True, max_epochs=2)
    arch = cfg.model.backbone.arch
    if 'dims' in change:
        dims = change['dims']
        arch.update(embed_dims=dims, feedforward_channels=dims * 2)
        cfg.model.neck.update(in_channels=dims, embed_dims=dims)
        cfg.embed_dims = dims  # the config's variable, kept true
    else:
        arch.num_layers = change['depth']
    with pytest.raises(RunRefused) as refused:
        _train(cfg)
    message = str(refused.value)
    assert 'epoch_1.pth' in message and 'another model' in message
    for text in expected:
        assert text in message
    assert _snapshot(work_dir) == before


@pytest.mark.fault_matrix(
    'train', 'rerun', 'training again into a work dir holding '
    'checkpoints is refused, naming them; nothing '
    'written; overwrite=True starts over')
def test_a_second_run_into_a_work_dir_with_checkpoints_is_refused(
        finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    before = _snapshot(work_dir)
    with pytest.raises(RunRefused) as refused:
        _train(_cfg(work_dir))
    message = str(refused.value)
    for text in ('epoch_1.pth', 'iter_2.pth', 'iter_4.pth', '--resume',
                 '--work-dir', 'overwrite=True'):
        assert text in message
    assert _snapshot(work_dir) == before
    # a load_from into it is refused the same way
    with pytest.raises(RunRefused):
        _train(_cfg(work_dir, load_from=str(work_dir / 'iter_2.pth')))
    assert _snapshot(work_dir) == before
    # the documented override starts over and replaces epoch_1.pth
    runner = _train(_cfg(work_dir, overwrite=True))
    assert runner.iter == 5
    assert os.stat(work_dir / 'epoch_1.pth').st_mtime_ns != \
        before['epoch_1.pth'][1]


def test_testing_from_a_checkpoint_of_the_work_dir_is_not_refused(
        finished, tmp_path):
    """tools/test.py builds the same runner on the training work dir."""
    work_dir = _copy(finished, tmp_path)
    runner = RUNNERS.build(
        _cfg(work_dir, load_from=str(work_dir / 'epoch_1.pth')))
    runner.load_or_resume()  # what test() and val() call
    saved = torch.load(
        work_dir / 'epoch_1.pth', weights_only=True)['state_dict']
    key = 'backbone.layers.0.attn.qkv.weight'
    assert torch.equal(runner.model.state_dict()[key], saved[key])


def test_a_fresh_or_empty_work_dir_trains(tmp_path):
    runner = _train(_cfg(tmp_path / 'new', resume=True))
    assert runner.iter == 5
    assert checkpoint_damage(str(tmp_path / 'new' / 'epoch_1.pth')) is None


@pytest.mark.fault_matrix(
    'resume', 'changed_run', 'a finished run resumed unchanged is refused, '
    'saying how to extend it; nothing written')
def test_a_finished_run_is_not_resumed(finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    before = _snapshot(work_dir)
    with pytest.raises(RunRefused, match='finished run') as refused:
        _train(_cfg(work_dir, resume=True))
    assert 'larger train_cfg.max_epochs' in str(refused.value)
    assert 'raise train_cfg.max_epochs.' not in str(refused.value)
    assert _snapshot(work_dir) == before


@pytest.mark.fault_matrix(
    'resume', 'changed_run',
    'a finished run extended with a larger max_epochs '
    'trains on the lr and momentum of a run planned '
    'at that length')
def test_extending_a_finished_run_follows_the_longer_plan(finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    extended = RecordScheduleHook()
    runner = _train(_cfg(work_dir, resume=True, max_epochs=2), extended)
    planned = RecordScheduleHook()
    _train(_cfg(tmp_path / 'planned', max_epochs=2), planned)
    assert runner.iter == 10
    assert [r['iter'] for r in extended.records] == list(range(5, 10))
    for got, want in zip(extended.records, planned.records[5:]):
        assert got['iter'] == want['iter']
        assert got['lr'] == pytest.approx(want['lr'], rel=1e-12)
        assert got['momentum'] == pytest.approx(want['momentum'], rel=1e-12)
    assert runner.optim_wrapper.get_lr()['lr'][0] == \
        runner.cfg.param_scheduler[1].eta_min


@pytest.mark.fault_matrix(
    'resume', 'changed_run', 'a longer run whose lr schedule is pinned to the '
    'old length is refused, naming the scheduler and '
    'the options to set')
def test_a_longer_run_with_a_pinned_schedule_is_refused(finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    before = _snapshot(work_dir)
    cfg = _cfg(work_dir, resume=True, max_epochs=2)
    cfg.param_scheduler[1].update(end=1, T_max=0.9)
    with pytest.raises(RunRefused) as refused:
        _train(cfg)
    message = str(refused.value)
    assert 'param_scheduler[1] (MinIterCosineAnnealingLR)' in message
    assert 'param_scheduler.1.end=' in message
    assert _snapshot(work_dir) == before


@pytest.mark.fault_matrix(
    'resume', 'changed_run', 'another epoch length (batch size, processes, '
    'dataset) is refused, naming both lengths')
def test_another_epoch_length_is_refused(tmp_path):
    with pytest.raises(_Crash):
        _train(_cfg(tmp_path, max_epochs=2), _CrashAfter(3))
    assert (tmp_path / 'last_checkpoint').read_text().endswith('iter_2.pth')
    before = _snapshot(tmp_path)
    cfg = _cfg(tmp_path, resume=True, max_epochs=2)
    cfg.train_dataloader.batch_size = 4
    with pytest.raises(
            RunRefused, match='epochs of 5 iterations, this one has 10'):
        _train(cfg)
    assert _snapshot(tmp_path) == before
    # unchanged, it resumes and trains the 8 iterations left
    runner = _train(_cfg(tmp_path, resume=True, max_epochs=2))
    assert runner.iter == 10


def _damage(path, fault):
    if fault == 'truncated':
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    elif fault == 'empty':
        path.write_bytes(b'')
    elif fault == 'text':
        path.write_text('version https://git-lfs.github.com/spec/v1\n')
    elif fault == 'missing':
        path.unlink()


@pytest.mark.parametrize('fault,named_by', [
    pytest.param(
        fault,
        named_by,
        marks=pytest.mark.fault_matrix(
            'resume', fault, f'a {fault} checkpoint given by {named_by} is '
            'refused naming it and the newest intact checkpoint; nothing '
            'written')) for fault in ('truncated', 'empty', 'text', 'missing')
    for named_by in ('--resume PATH', 'last_checkpoint')
])
def test_a_damaged_checkpoint_is_named_with_the_newest_intact_one(
        finished, tmp_path, fault, named_by):
    work_dir = _copy(finished, tmp_path)
    damaged = work_dir / 'epoch_1.pth'
    _damage(damaged, fault)
    before = _snapshot(work_dir)
    cfg = _cfg(work_dir, resume=True, max_epochs=2)
    if named_by == '--resume PATH':
        cfg.load_from = str(damaged)
    with pytest.raises(RunRefused) as refused:
        _train(cfg)
    message = str(refused.value)
    assert f'cannot read the checkpoint {damaged}' in message
    assert str(work_dir / 'iter_4.pth') in message
    if named_by == 'last_checkpoint':
        assert str(work_dir / 'last_checkpoint') in message
    assert _snapshot(work_dir) == before


@pytest.mark.fault_matrix(
    'resume', 'empty', 'an empty last_checkpoint is refused naming it '
    'and the newest intact checkpoint')
def test_an_empty_last_checkpoint_is_named(finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    (work_dir / 'last_checkpoint').write_text('')
    before = _snapshot(work_dir)
    with pytest.raises(RunRefused) as refused:
        _train(_cfg(work_dir, resume=True, max_epochs=2))
    message = str(refused.value)
    assert f'{work_dir / "last_checkpoint"} is empty' in message
    assert str(work_dir / 'epoch_1.pth') in message
    assert _snapshot(work_dir) == before


def test_resume_without_last_checkpoint_names_the_checkpoints(
        finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    (work_dir / 'last_checkpoint').unlink()
    with pytest.raises(RunRefused, match='no last_checkpoint file'):
        _train(_cfg(work_dir, resume=True, max_epochs=2))


def test_a_moved_work_dir_resumes_from_its_own_checkpoint(finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    (work_dir / 'last_checkpoint').write_text('/elsewhere/run/iter_4.pth')
    with pytest.raises(_Crash):
        _train(_cfg(work_dir, resume=True, max_epochs=2), _CrashAfter(6))
    assert (work_dir / 'last_checkpoint').read_text() == \
        str(work_dir / 'iter_6.pth')


class _FailThirdIterationSave(Hook):
    """The 3rd iteration checkpoint's write dies (an exception inside the
    runner's save)."""
    priority = 'VERY_HIGH'

    def before_save_checkpoint(self, runner, checkpoint):
        if checkpoint['meta']['iter'] == 6:
            raise _Crash


@pytest.mark.fault_matrix(
    'train', 'mid_write', 'a write that dies keeps max_keep_ckpts intact '
    'checkpoints and last_checkpoint on the newest')
def test_a_failed_write_keeps_the_older_checkpoints(tmp_path):
    with pytest.raises(_Crash):
        _train(_cfg(tmp_path, max_epochs=2), _FailThirdIterationSave())
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    # mmengine deletes iter_2.pth before it writes iter_6.pth
    assert names == [
        'epoch_1.pth', 'iter_2.pth', 'iter_4.pth', 'last_checkpoint',
        'siameseim_tiny_fashionmnist.py'
    ]
    assert (tmp_path / 'last_checkpoint').read_text() == \
        str(tmp_path / 'epoch_1.pth')
    assert all(
        checkpoint_damage(str(tmp_path / n)) is None for n in names
        if n.endswith('.pth'))


def test_refused_run_in_a_new_work_dir_leaves_nothing(finished, tmp_path):
    """--resume PATH of another model into a new work dir: the work dir the
    runner created is removed again."""
    cfg = _cfg(
        tmp_path / 'new',
        resume=True,
        max_epochs=2,
        load_from=str(finished / 'epoch_1.pth'))
    cfg.model.backbone.arch.num_layers = 3
    with pytest.raises(RunRefused):
        _train(cfg)
    assert not (tmp_path / 'new').exists()


def test_the_checks_come_before_any_weight_is_loaded(finished, tmp_path):
    work_dir = _copy(finished, tmp_path)
    cfg = _cfg(work_dir, resume=True, max_epochs=2)
    cfg.model.backbone.arch.num_layers = 3
    runner = RUNNERS.build(cfg)
    with pytest.raises(RunRefused):
        runner.train()
    saved = torch.load(
        work_dir / 'epoch_1.pth', weights_only=True)['state_dict']
    key = 'backbone.layers.0.attn.qkv.weight'
    assert not torch.equal(runner.model.state_dict()[key], saved[key])


def test_a_runner_built_in_the_second_a_run_was_refused_gets_its_own_logs(
        finished, tmp_path, monkeypatch):
    # one experiment name for both runners, as two built in one second get
    import time
    monkeypatch.setattr(time, 'strftime', lambda *args: '20260101_000000')
    for name in ('a', 'b'):
        work_dir = _copy(finished, tmp_path / name)
        _damage(work_dir / 'epoch_1.pth', 'empty')
        cfg = _cfg(work_dir, resume=True, max_epochs=2)
        cfg.load_from = str(work_dir / 'epoch_1.pth')
        # the second is refused too, not failed writing into the first's
        # removed log folder
        with pytest.raises(RunRefused, match='cannot read the checkpoint'):
            _train(cfg)
