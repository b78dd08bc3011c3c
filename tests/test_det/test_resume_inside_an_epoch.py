"""A detection fine-tune (the mmdet smoke config, as the benchmark config
has it: mmengine's EpochBasedTrainLoop under FaultTolerantRunner) stopped
inside its epoch resumes at its batch and ends at its plan (it replayed the
epoch: 46 iterations for 42)."""
import os

import pytest
from mmengine.config import Config
from mmengine.hooks import Hook

from mmsiameseim.engine.runner import (ExactResumeEpochBasedTrainLoop,
                                       FaultTolerantRunner)
from tests.test_det import test_benchmarks_e2e as e2e

smoke_root = e2e.smoke_root  # its smoke data and pretraining checkpoint
CONFIG = os.path.join(
    e2e.SMOKE_DIR,
    'mask-rcnn_vitdet-tiny-p4-siameseim-pre_1xb2-1e_smoke-coco-128.py')


class _Stop(Exception):
    pass


class _Steps(Hook):
    """Records each step's iteration; stops the run after ``stop``."""
    priority = 'LOWEST'

    def __init__(self, stop=None):
        self.stop, self.steps = stop, []

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        self.steps.append((runner.iter, batch_idx))
        if runner.iter + 1 == self.stop:
            raise _Stop


def _runner(work_dir, resume=False):
    cfg = Config.fromfile(CONFIG)
    assert cfg.runner_type == 'FaultTolerantRunner'
    assert cfg.train_cfg.get('type', 'EpochBasedTrainLoop') == \
        'EpochBasedTrainLoop'
    cfg.work_dir = str(work_dir)
    cfg.resume = resume
    cfg.train_cfg.max_epochs = 2  # 4 images, batch 2: 2 iterations each
    cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
    cfg.train_cfg.pop('val_interval', None)
    cfg.default_hooks.checkpoint = dict(
        type='CheckpointHook', by_epoch=False, interval=1)
    return FaultTolerantRunner.from_cfg(cfg)


@pytest.mark.person_matrix(
    'resume', 'mixing',
    'a Mask R-CNN fine-tune (mmdet config naming EpochBasedTrainLoop) '
    'stopped inside its second epoch resumes from iter_3.pth at its second '
    'batch and ends at iteration 4, not 5')
def test_a_detection_fine_tune_resumes_at_its_batch(smoke_root, tmp_path,
                                                    monkeypatch):
    monkeypatch.chdir(smoke_root)
    runner = _runner(tmp_path)
    stopped = _Steps(stop=3)
    runner.register_hook(stopped)
    with pytest.raises(_Stop):
        runner.train()
    assert isinstance(runner.train_loop, ExactResumeEpochBasedTrainLoop)
    assert runner.train_loop.max_iters == 4
    resumed = _runner(tmp_path, resume=True)
    steps = _Steps()
    resumed.register_hook(steps)
    resumed.train()
    assert steps.steps == [(3, 1)]
    assert resumed.iter == 4
