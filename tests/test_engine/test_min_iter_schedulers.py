"""Fractional-epoch schedules on tiny epochs: a 0.1-epoch warm-up on an
epoch of fewer than 10 iterations keeps one iteration instead of failing."""
import pytest
import torch
from mmengine.optim import CosineAnnealingLR, LinearLR
from mmpretrain.registry import PARAM_SCHEDULERS

import mmsiameseim  # noqa: F401


def _optimizer():
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.)


def _build(type_, epoch_length, **kw):
    return PARAM_SCHEDULERS.build(
        dict(type=type_, by_epoch=True, convert_to_iter_based=True, **kw),
        default_args=dict(optimizer=_optimizer(),
                          epoch_length=epoch_length))


def test_mmengine_fails_on_a_tiny_epoch():
    with pytest.raises(ValueError, match='end should be larger than begin'):
        LinearLR.build_iter_from_epoch(_optimizer(), begin=0, end=0.1,
                                       epoch_length=8)


@pytest.mark.parametrize('epoch_length', [1, 3, 8])
def test_warmup_and_cosine_keep_at_least_one_iteration(epoch_length):
    warmup = _build('MinIterLinearLR', epoch_length, start_factor=1e-3,
                    begin=0, end=0.1)
    cosine = _build('MinIterCosineAnnealingLR', epoch_length, T_max=0.9,
                    begin=0.1, end=1)
    assert (warmup.begin, warmup.end) == (0, 1)
    assert cosine.begin == 1 and cosine.end > cosine.begin


@pytest.mark.parametrize('begin,end', [(0, 0.1), (0.1, 1), (2, 40)])
def test_same_as_mmengine_when_boundaries_are_whole_iterations(begin, end):
    ours = _build('MinIterCosineAnnealingLR', 938, T_max=end - begin,
                  begin=begin, end=end)
    theirs = CosineAnnealingLR.build_iter_from_epoch(
        _optimizer(), T_max=end - begin, begin=begin, end=end,
        epoch_length=938)
    assert (ours.begin, ours.end, ours.T_max) == (theirs.begin, theirs.end,
                                                  theirs.T_max)


def test_tiny_fashion_mnist_run_trains(tmp_path):
    """The Fashion-MNIST config on 3 iterations per epoch (it failed with
    "end should be larger than begin")."""
    import os.path as osp
    from mmengine.config import Config
    from mmengine.runner import Runner
    from tests.helpers import ROOT
    cfg = Config.fromfile(osp.join(
        ROOT, 'configs', 'pretrain',
        'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'))
    cfg.work_dir = str(tmp_path)
    from mmsiameseim.evaluation import set_training_precision
    set_training_precision(cfg, 'float32')
    cfg.train_dataloader.update(batch_size=8, num_workers=0,
                                persistent_workers=False)
    cfg.train_dataloader.dataset.indices = 24
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 3
    assert runner.optim_wrapper.get_lr()['lr'][0] > 0
