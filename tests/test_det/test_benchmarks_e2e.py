"""The two mmdet benchmark configs end to end on generated data: the full
config shrunk by the smoke --cfg-options, a fresh pretraining checkpoint of
the Fashion-MNIST demo model, 2 training iterations, then evaluation."""
import math
import os

import numpy as np
import pytest
from mmengine.config import Config
from mmengine.runner import Runner

from tests.test_det.helpers import (ROOT, load_tool,
                                    save_demo_pretrain_checkpoint)

CFG_DIR = os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet')
FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')
IMG_SIZE = 64  # the smallest the tool allows: fast on 2 CPU cores


@pytest.fixture(scope='module')
def smoke_setup(tmp_path_factory):
    tool = load_tool('make_smoke_coco_lvis')
    root = tmp_path_factory.mktemp('smoke')
    tool.make_datasets(FMNIST, str(root / 'data'), num_train=4, num_val=3,
                       img_size=IMG_SIZE)
    save_demo_pretrain_checkpoint(root / 'pretrain.pth')
    return tool, root


def run(smoke_setup, config, dataset, tmp_path):
    tool, root = smoke_setup
    cfg = Config.fromfile(os.path.join(CFG_DIR, config))
    cfg.merge_from_dict(
        tool.smoke_cfg_options(str(root / 'data'),
                               str(root / 'pretrain.pth'), dataset,
                               img_size=IMG_SIZE))
    cfg.work_dir = str(tmp_path)
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=-1)
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 2  # 4 images, batch 2, one epoch
    scalars = runner.message_hub.log_scalars
    return {k[len('val/'):]: v.current() for k, v in scalars.items()
            if k.startswith('val/')}


def assert_metrics(metrics, keys):
    for key in keys:
        assert key in metrics, sorted(metrics)
        assert math.isfinite(metrics[key]) and 0 <= metrics[key] <= 1, key


def test_coco_mask_rcnn_vitdet_trains_and_evaluates(smoke_setup, tmp_path):
    metrics = run(smoke_setup,
                  'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py',
                  'coco', tmp_path)
    assert_metrics(metrics, ['coco/bbox_mAP', 'coco/bbox_mAP_50',
                             'coco/segm_mAP', 'coco/segm_mAP_50'])


def test_lvis_mask_rcnn_vitdet_trains_and_evaluates(smoke_setup, tmp_path):
    metrics = run(smoke_setup,
                  'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_lvis-v1.py',
                  'lvis', tmp_path)
    assert_metrics(metrics, ['lvis/bbox_AP', 'lvis/bbox_APr', 'lvis/bbox_APc',
                             'lvis/bbox_APf', 'lvis/segm_AP',
                             'lvis/segm_APr'])
    assert not hasattr(np, 'float')  # the lvis numpy shim was undone
