"""The two mmdet smoke configs (configs/benchmarks/mmdet/smoke/: the
benchmark configs shrunk to the Fashion-MNIST demo model) end to end, run
as they are from a folder holding what they read: the generated data under
data/smoke_det and a fresh pretraining checkpoint of the demo model at
work_dirs/demo/siameseim/epoch_1.pth; 2 training iterations, then
evaluation."""
import math
import os

import numpy as np
import pytest
from mmengine.config import Config
from mmengine.runner import Runner

from mmsiameseim.testing.coco_lvis import make_datasets
from tests.test_det.helpers import ROOT, save_demo_pretrain_checkpoint

SMOKE_DIR = os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet', 'smoke')
FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')


@pytest.fixture(scope='module')
def smoke_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('smoke')
    make_datasets(
        FMNIST, str(root / 'data' / 'smoke_det'), num_train=4, num_val=3)
    ckpt = root / 'work_dirs' / 'demo' / 'siameseim' / 'epoch_1.pth'
    ckpt.parent.mkdir(parents=True)
    save_demo_pretrain_checkpoint(ckpt)
    return root


def run(smoke_root, dataset, tmp_path, monkeypatch):
    cfg = Config.fromfile(
        os.path.join(
            SMOKE_DIR, 'mask-rcnn_vitdet-tiny-p4-siameseim-pre_1xb2-1e_'
            f'smoke-{dataset}-128.py'))
    cfg.work_dir = str(tmp_path)
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=-1)
    monkeypatch.chdir(smoke_root)  # the config's relative paths
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 2  # 4 images, batch 2, one epoch
    scalars = runner.message_hub.log_scalars
    metrics = {
        k[len('val/'):]: v.current()
        for k, v in scalars.items() if k.startswith('val/')
    }
    tested = runner.test()  # what `mim test` of the smoke README runs
    assert set(tested) == set(metrics) - {'time', 'data_time'}
    return metrics


def assert_metrics(metrics, keys):
    for key in keys:
        assert key in metrics, sorted(metrics)
        assert math.isfinite(metrics[key]) and 0 <= metrics[key] <= 1, key


def test_coco_mask_rcnn_vitdet_trains_and_evaluates(smoke_root, tmp_path,
                                                    monkeypatch):
    metrics = run(smoke_root, 'coco', tmp_path, monkeypatch)
    assert_metrics(metrics, [
        'coco/bbox_mAP', 'coco/bbox_mAP_50', 'coco/segm_mAP',
        'coco/segm_mAP_50'
    ])


def test_lvis_mask_rcnn_vitdet_trains_and_evaluates(smoke_root, tmp_path,
                                                    monkeypatch):
    metrics = run(smoke_root, 'lvis-v1', tmp_path, monkeypatch)
    assert_metrics(metrics, [
        'lvis/bbox_AP', 'lvis/bbox_APr', 'lvis/bbox_APc', 'lvis/bbox_APf',
        'lvis/segm_AP', 'lvis/segm_APr'
    ])
    assert not hasattr(np, 'float')  # the lvis numpy shim was undone
