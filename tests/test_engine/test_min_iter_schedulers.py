"""Schedules on any epoch length and epoch count: the warm-up hands over
at exactly the configured lr and the cosine ends at exactly eta_min, for
every scheduler combination the pretraining configs ship."""
import glob
import os.path as osp
import types

import pytest
import torch
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.optim import OptimWrapper
from mmengine.optim.scheduler.param_scheduler import INF
from mmengine.registry import RUNNERS, DefaultScope
from mmengine.runner import EpochBasedTrainLoop, Runner
from mmpretrain.registry import PARAM_SCHEDULERS

import mmsiameseim  # noqa: F401
from tests.helpers import ROOT

PRETRAIN = osp.join(ROOT, 'configs', 'pretrain')
TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
EPOCH_LENGTHS = [1, 2, 3, 5, 9, 10, 11, 15, 19, 20, 21, 50]


def _combinations():
    """One config per distinct (schedulers, lr, epochs) of the shipped
    pretraining configs."""
    seen = {}
    for path in sorted(
            glob.glob(osp.join(PRETRAIN, '**', '*.py'), recursive=True)):
        if '_base_' in path:
            continue
        cfg = Config.fromfile(path)
        key = repr((cfg.param_scheduler, cfg.optim_wrapper.optimizer.lr,
                    cfg.train_cfg.max_epochs))
        seen.setdefault(key, osp.relpath(path, PRETRAIN))
    return sorted(seen.values())


def _lr_run(cfg, epoch_length, max_epochs):
    """The lr of each iteration of a run, and after it, with the config's
    schedulers built by mmengine's Runner code (the default ``end`` of a
    scheduler that has none is the loop's ``max_epochs``) and stepped as
    ``ParamSchedulerHook`` steps them."""
    lr = cfg.optim_wrapper.optimizer.lr
    optim = OptimWrapper(
        torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr))
    loop = object.__new__(EpochBasedTrainLoop)
    stub = types.SimpleNamespace(
        _train_loop=loop,
        max_epochs=max_epochs,
        max_iters=max_epochs * epoch_length,
        train_dataloader=range(epoch_length),
        logger=types.SimpleNamespace(debug=lambda *a: None))
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        schedulers = Runner._build_param_scheduler(
            stub, [dict(s) for s in cfg.param_scheduler], optim)
    lrs = []
    for _ in range(max_epochs):
        for _ in range(epoch_length):
            lrs.append(optim.param_groups[0]['lr'])
            for s in schedulers:
                if not s.by_epoch:
                    s.step()
        for s in schedulers:
            if s.by_epoch:
                s.step()
    return lrs, optim.param_groups[0]['lr']


def _assert_reaches_lr_and_ends_at_eta_min(cfg, lrs, final):
    lr = cfg.optim_wrapper.optimizer.lr
    warmup, cosine = cfg.param_scheduler
    eta_min = cosine.eta_min
    peak = lrs.index(max(lrs))
    assert max(lrs) == pytest.approx(lr, rel=1e-12), 'never at the base lr'
    assert final == pytest.approx(eta_min, rel=1e-12, abs=1e-15), \
        'does not end at eta_min'
    if len(lrs) > 1:
        assert lrs[0] == pytest.approx(lr * warmup.start_factor, rel=1e-9)
    assert all(a <= b for a, b in zip(lrs[:peak], lrs[1:peak + 1]))
    assert all(a >= b for a, b in zip(lrs[peak:], lrs[peak + 1:]))


def test_the_shipped_combinations_are_found():
    found = _combinations()
    assert any('fashionmnist' in p for p in found)
    assert any('400e' in p for p in found) and any('1600e' in p for p in found)


@pytest.mark.fault_matrix(
    'train', 'schedule', 'any epoch length and epoch count reaches the '
    'configured lr and ends at eta_min')
@pytest.mark.parametrize('config', _combinations())
def test_every_epoch_length_reaches_the_lr_and_ends_at_eta_min(config):
    cfg = Config.fromfile(osp.join(PRETRAIN, config))
    warmup_epochs = cfg.param_scheduler[0].end
    counts = sorted({
        max(1,
            int(warmup_epochs) + 1),
        int(warmup_epochs) + 2,
        int(2 * warmup_epochs) + 3
    })
    for epoch_length in EPOCH_LENGTHS:
        for max_epochs in counts:
            lrs, final = _lr_run(cfg, epoch_length, max_epochs)
            _assert_reaches_lr_and_ends_at_eta_min(cfg, lrs, final)
    # the config's own length, on short epochs
    for epoch_length in (1, 2, 3):
        lrs, final = _lr_run(cfg, epoch_length, cfg.train_cfg.max_epochs)
        _assert_reaches_lr_and_ends_at_eta_min(cfg, lrs, final)


def _build(type_, epoch_length, **kw):
    optim = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.)
    return PARAM_SCHEDULERS.build(
        dict(type=type_, by_epoch=True, convert_to_iter_based=True, **kw),
        default_args=dict(optimizer=optim, epoch_length=epoch_length))


@pytest.mark.parametrize('epoch_length', [1, 3, 8])
def test_warmup_and_cosine_keep_at_least_one_iteration(epoch_length):
    warmup = _build(
        'MinIterLinearLR', epoch_length, start_factor=1e-3, begin=0, end=0.1)
    cosine = _build(
        'MinIterCosineAnnealingLR', epoch_length, T_max=0.9, begin=0.1, end=1)
    assert (warmup.begin, warmup.end) == (0, 1)
    assert cosine.end == epoch_length
    assert cosine.begin == min(1, epoch_length - 1)
    # the period ends where the phase does
    assert cosine.T_max == cosine.end - cosine.begin


def test_one_iteration_run_trains_at_the_lr_and_ends_at_eta_min():
    """Both phases cannot fit in one iteration: the cosine starts on it."""
    cfg = Config.fromfile(TINY)
    lrs, final = _lr_run(cfg, 1, 1)
    assert lrs == [cfg.optim_wrapper.optimizer.lr]
    assert final == cfg.param_scheduler[1].eta_min


def test_same_as_mmengine_where_it_reaches_its_end_value():
    """On whole-iteration boundaries the cosine is mmengine's, iteration by
    iteration, plus eta_min after its last step."""
    from mmengine.optim import CosineAnnealingLR
    ours = _build(
        'MinIterCosineAnnealingLR', 100, begin=2, end=40, eta_min=0.01)
    optim = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.)
    theirs = CosineAnnealingLR.build_iter_from_epoch(
        optim, begin=2, end=40, eta_min=0.01, epoch_length=100)
    assert (ours.begin, ours.end, ours.T_max) == (theirs.begin, theirs.end,
                                                  theirs.T_max)
    for _ in range(ours.end - 1):
        ours.step()
        theirs.step()
        assert ours.optimizer.param_groups[0]['lr'] == pytest.approx(
            optim.param_groups[0]['lr'], rel=1e-9)
    ours.step()
    assert ours.optimizer.param_groups[0]['lr'] == 0.01


def test_an_open_end_is_kept():
    warmup = _build('MinIterLinearLR', 10, start_factor=0.5, begin=0, end=INF)
    assert warmup.end == INF


class _RecordLr(Hook):

    def __init__(self):
        self.lrs = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.lrs.append(runner.optim_wrapper.get_lr()['lr'][0])


@pytest.mark.fault_matrix(
    'train', 'schedule', 'a 3-iteration epoch trains at the configured lr '
    'and ends at eta_min (real Runner)')
def test_tiny_fashion_mnist_run_reaches_the_lr_and_ends_at_eta_min(tmp_path):
    """The Fashion-MNIST config on 3 iterations per epoch, 2 epochs, through
    the runner of the config (it once failed with "end should be larger
    than begin", then trained at 1e-6 throughout)."""
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(tmp_path)
    cfg.train_dataloader.dataset.indices = 24
    cfg.train_cfg.max_epochs = 2
    runner = RUNNERS.build(cfg)
    record = _RecordLr()
    runner.register_hook(record)
    runner.train()
    assert runner.iter == 6
    assert max(record.lrs) == pytest.approx(
        cfg.optim_wrapper.optimizer.lr, rel=1e-12)
    assert record.lrs[0] == pytest.approx(cfg.optim_wrapper.optimizer.lr *
                                          cfg.param_scheduler[0].start_factor)
    assert runner.optim_wrapper.get_lr()['lr'][0] == \
        cfg.param_scheduler[1].eta_min
    assert record.lrs == pytest.approx(_lr_run(cfg, 3, 2)[0], rel=1e-12)
