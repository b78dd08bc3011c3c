"""Your own COCO-format data on non-square photographs, end to end with the
two detection commands of docs/benchmarks.md ("Your own detection or
segmentation data"), as written, on the CPU smoke child of the config they
name (the same config shrunk to the Fashion-MNIST demo model at 128 px),
through FaultTolerantRunner as `mim train` / `mim test` build it."""
import math
import os

import pytest
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.registry import RUNNERS

from tests.test_det.helpers import (OWN_CLASSES, ROOT, make_own_coco,
                                    save_demo_pretrain_checkpoint)
from tests.test_docs.helpers import documented_commands, parse_command

DOC = os.path.join(ROOT, 'docs', 'benchmarks.md')
SECTION = '## Your own detection or segmentation data'
MMDET = os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet')
COCO = 'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py'
SMOKE_COCO = os.path.join(
    MMDET, 'smoke',
    'mask-rcnn_vitdet-tiny-p4-siameseim-pre_1xb2-1e_smoke-coco-128.py')


def det_commands(subs):
    found = [
        parse_command(c, subs) for c in documented_commands(DOC, SECTION)
        if c[2] == 'mmdet'
    ]
    assert [c['action'] for c in found] == ['train', 'test']
    return found


def smoke_child(command, work_dir):
    """The command's config, shrunk by its CPU smoke child, with the
    command's options."""
    assert command['config'] == f'configs/benchmarks/mmdet/{COCO}'
    assert f"'../{COCO}'" in open(SMOKE_COCO).read()  # its first base
    cfg = Config.fromfile(SMOKE_COCO)
    cfg.merge_from_dict(command['options'])
    cfg.work_dir = str(work_dir)
    # the Runner formats the config dump through yapf (seconds); any name
    cfg.visualizer.name = f'visualizer_{work_dir}'
    return cfg


class Predictions(Hook):
    """The validation / test predictions with their image metainfo."""

    def __init__(self):
        self.samples = []

    def after_val_iter(self, runner, batch_idx, data_batch, outputs):
        self.samples += outputs

    after_test_iter = after_val_iter


def assert_inside_their_images(samples):
    assert samples
    for s in samples:
        h, w = s.ori_shape
        assert tuple(s.img_shape) != tuple(s.pad_shape)  # padded, not the size
        boxes = s.pred_instances.bboxes
        assert len(boxes)
        assert float(boxes[:, [0, 2]].max()) <= w + 1e-3, (boxes, w)
        assert float(boxes[:, [1, 3]].max()) <= h + 1e-3, (boxes, h)
        assert tuple(s.pred_instances.masks.shape[1:]) == (h, w)


@pytest.fixture
def fast_config_dump(monkeypatch):
    monkeypatch.setattr('mmengine.config.config.FormatCode',
                        lambda text, **kwargs: (text, False))


@pytest.mark.person_matrix(
    'detection', 'aspect_ratio', 'ViTDet fine-tunes and evaluates '
    'landscape and portrait photos on a CPU: the LSJ test padding is the '
    'canvas (pad_shape), never the image the boxes are clipped to and the '
    'masks pasted into')
@pytest.mark.person_matrix(
    'detection', 'num_classes', 'num_classes left at the config\'s value '
    'is refused before the first step, naming both heads\' options')
@pytest.mark.person_matrix(
    'detection', 'test_command', 'the documented `mim test` command '
    'evaluates the checkpoint the documented `mim train` saved')
def test_own_coco_fine_tunes_and_evaluates_non_square_photos(
        tmp_path, fast_config_dump):
    data = tmp_path / 'own'
    make_own_coco(str(data), num_train=4, num_val=2)
    pretrain = tmp_path / 'pretrain.pth'
    save_demo_pretrain_checkpoint(pretrain)
    work = tmp_path / 'work'
    subs = {
        'PRETRAINING.pth': str(pretrain),
        'WORK_DIR/epoch_100.pth': str(work / 'epoch_1.pth'),
        'WORK_DIR': str(work),
        'DIR/': f'{data}/',
    }
    train, test = det_commands(subs)

    # the class count left at the config's (the smoke model's 10)
    wrong = dict(
        train,
        options={
            k: v
            for k, v in train['options'].items() if 'num_classes' not in k
        })
    runner = RUNNERS.build(smoke_child(wrong, tmp_path / 'wrong'))
    assert type(runner).__name__ == 'FaultTolerantRunner'
    with pytest.raises(ValueError) as e:
        runner.train()
    assert runner.iter == 0
    for option in ('model.roi_head.bbox_head.num_classes=10',
                   'model.roi_head.mask_head.num_classes=10',
                   'has 2 classes (cat, dog)',
                   'model.roi_head.bbox_head.num_classes=2 '
                   'model.roi_head.mask_head.num_classes=2'):
        assert option in str(e.value)

    cfg = smoke_child(train, work)
    assert cfg.train_dataloader.dataset.type == 'CheckedCocoDataset'
    runner = RUNNERS.build(cfg)
    seen = Predictions()
    runner.register_hook(seen)
    runner.train()
    assert runner.iter == 2  # 4 photos, batch 2, one epoch
    assert runner.train_dataloader.dataset.metainfo['classes'] == list(
        OWN_CLASSES)
    assert len(seen.samples) == 2
    assert_inside_their_images(seen.samples)
    assert os.path.isfile(work / 'epoch_1.pth')

    cfg = smoke_child(test, tmp_path / 'test')
    cfg.load_from = test['checkpoint']
    runner = RUNNERS.build(cfg)
    seen = Predictions()
    runner.register_hook(seen)
    metrics = runner.test()
    assert_inside_their_images(seen.samples)
    for key in ('coco/bbox_mAP', 'coco/segm_mAP'):
        assert math.isfinite(metrics[key]) and 0 <= metrics[key] <= 1, key
