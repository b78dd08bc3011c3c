"""Resuming from an iteration checkpoint inside an epoch trains exactly the
rest of the run: the same weights, target, lr and momentum as one
uninterrupted run (the Fashion-MNIST config on a subset, fp32)."""
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from mmsiameseim.evaluation import set_training_precision
from tests.helpers import ROOT

CFG = osp.join(ROOT, 'configs', 'pretrain',
               'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')
BATCH, ITERS_PER_EPOCH, EPOCHS = 8, 5, 2


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


class _CrashAtEpochEnd(Hook):
    """Stops the run like a kill, after the first epoch checkpoint."""
    priority = 'LOWEST'

    def after_train_epoch(self, runner):
        raise _Crash


class _CountIters(Hook):
    """Records the global iteration and batch index of each step run."""

    def __init__(self):
        self.steps = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.steps.append((runner.iter, batch_idx))


def _cfg(work_dir, resume=False):
    cfg = Config.fromfile(CFG)
    cfg.work_dir = str(work_dir)
    cfg.resume = resume
    set_training_precision(cfg, 'float32')
    cfg.train_dataloader.update(
        batch_size=BATCH, num_workers=0, persistent_workers=False)
    cfg.train_dataloader.dataset.indices = BATCH * ITERS_PER_EPOCH
    cfg.train_cfg.max_epochs = EPOCHS
    for sched in cfg.param_scheduler:
        if sched.type.endswith('CosineAnnealingLR'):
            sched.update(T_max=EPOCHS - sched.begin, end=EPOCHS)
    cfg.default_hooks.logger.interval = 1
    cfg.custom_hooks[1].interval = 3  # iteration checkpoints: 3, 6, 9
    return cfg


def _train(cfg, hook=None):
    runner = Runner.from_cfg(cfg)
    if hook is not None:
        runner.register_hook(hook)
    runner.train()
    return runner


def _state(runner):
    model = runner.model
    return dict(
        weights=model.state_dict(),
        lr=runner.optim_wrapper.get_lr()['lr'],
        momentum=model.target.current_momentum())


@pytest.fixture(scope='module')
def straight(tmp_path_factory):
    return _state(_train(_cfg(tmp_path_factory.mktemp('straight'))))


@pytest.mark.parametrize(
    'crash,checkpoint,steps',
    [
        # iteration 6 is the 2nd batch of epoch 2: 4 steps are left, not 5
        (_CrashAfter(8), 'iter_6.pth', [(6, 1), (7, 2), (8, 3), (9, 4)]),
        (_CrashAtEpochEnd(), 'epoch_1.pth', [(i, i - 5)
                                             for i in range(5, 10)]),
    ])
def test_resume_equals_the_uninterrupted_run(straight, tmp_path, crash,
                                             checkpoint, steps):
    with pytest.raises(_Crash):
        _train(_cfg(tmp_path), crash)
    assert open(tmp_path / 'last_checkpoint').read().endswith(checkpoint)
    counter = _CountIters()
    resumed = _state(_train(_cfg(tmp_path, resume=True), counter))
    assert counter.steps == steps
    assert resumed['lr'] == pytest.approx(straight['lr'], abs=1e-12)
    assert resumed['momentum'] == pytest.approx(
        straight['momentum'], abs=1e-12)
    a, b = straight['weights'], resumed['weights']
    assert a.keys() == b.keys()
    assert any(k.startswith('target.module.') for k in a)
    for key in a:
        torch.testing.assert_close(
            b[key],
            a[key],
            rtol=0,
            atol=1e-6,
            msg=f'{key} differs after resume')


def test_a_finished_run_is_not_resumed(tmp_path):
    _train(_cfg(tmp_path))
    files = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    with pytest.raises(RuntimeError, match='finished run'):
        _train(_cfg(tmp_path, resume=True))
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == files


def test_no_config_resumes_unless_asked():
    import glob

    from mmengine.config import Config
    paths = glob.glob(
        osp.join(ROOT, 'configs', 'pretrain', '**', '*.py'), recursive=True)
    paths = [p for p in paths if '_base_' not in p]
    assert paths
    for path in paths:
        assert Config.fromfile(path).get('resume', False) is False, path


def test_a_dataset_smaller_than_a_batch_is_refused_by_name(tmp_path):
    """drop_last with fewer images than a batch: no iteration an epoch;
    refused naming the folder, its size and the batch, before mmengine's
    "epoch_length must be a positive integer, but got 0"."""
    cfg = _cfg(tmp_path)
    cfg.train_dataloader.dataset.indices = BATCH - 1
    cfg.train_dataloader.drop_last = True
    with pytest.raises(ValueError) as err:
        _train(cfg)
    message = str(err.value)
    assert f'{BATCH - 1} image(s) in ' in message
    assert 'fashion_mnist' in message and f'no batch of {BATCH}' in message
    assert 'train_dataloader.batch_size' in message
