"""mmsiameseim.testing.coco_lvis on real Fashion-MNIST, and the
smoke configs that read its output."""
import json
import os

import numpy as np
import pycocotools.mask as mask_util
import pytest

from mmsiameseim.testing import coco_lvis
from tests.test_det.helpers import ROOT

FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')
SMOKE_DIR = os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet', 'smoke')


def test_writes_coco_and_lvis_layouts_with_exact_masks(tmp_path, capsys):
    import cv2
    coco_lvis.make_datasets(
        FMNIST, str(tmp_path), num_train=3, num_val=2, img_size=64)
    ann_dir = tmp_path / 'coco' / 'annotations'
    coco = json.load(open(ann_dir / 'instances_val2017.json'))
    assert len(coco['images']) == 2 and len(coco['categories']) == 10
    for ann in coco['annotations']:
        mask = mask_util.decode(ann['segmentation'])
        assert mask.sum() == ann['area'] > 0
        ys, xs = np.nonzero(mask)
        assert ann['bbox'] == [
            xs.min(),
            ys.min(),
            xs.max() - xs.min() + 1,
            ys.max() - ys.min() + 1
        ]
    img = cv2.imread(
        str(tmp_path / 'coco/val2017' / coco['images'][0]['file_name']))
    assert img.shape == (64, 64, 3) and img.std() > 10  # real pixels

    ann_dir = tmp_path / 'lvis_v1' / 'annotations'
    train = json.load(open(ann_dir / 'lvis_v1_train.json'))
    val = json.load(open(ann_dir / 'lvis_v1_val.json'))
    freq = {c['name']: c['frequency'] for c in train['categories']}
    assert freq['bag'] == freq['ankle_boot'] == 'r'
    assert set(freq.values()) == {'r', 'c', 'f'}
    for cat in train['categories']:
        anns = [
            a for a in train['annotations'] if a['category_id'] == cat['id']
        ]
        assert cat['instance_count'] == len(anns)
        assert cat['image_count'] == len({a['image_id'] for a in anns})
        if cat['frequency'] == 'r':
            assert cat['image_count'] == 1
    rare = {c['id'] for c in val['categories'] if c['frequency'] == 'r'}
    assert rare <= {a['category_id'] for a in val['annotations']}
    for im in val['images']:
        present = {
            a['category_id']
            for a in val['annotations'] if a['image_id'] == im['id']
        }
        assert set(im['neg_category_ids']).isdisjoint(present)
        assert len(im['neg_category_ids']) + len(present) == 10
        assert im['not_exhaustive_category_ids'] == []
        rel = im['coco_url'].replace('http://images.cocodataset.org/', '')
        assert rel.startswith('val2017/')
        assert (tmp_path / 'lvis_v1' / rel).is_file()

    capsys.readouterr()
    coco_lvis.make_datasets(
        FMNIST, str(tmp_path), num_train=3, num_val=2, img_size=64)
    assert 'nothing to do' in capsys.readouterr().out


def test_missing_fashion_mnist_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match='train-images-idx3-ubyte'):
        coco_lvis.make_datasets(str(tmp_path / 'none'), str(tmp_path / 'out'))


def test_smoke_configs_read_what_the_tool_writes_by_default():
    """The configs' data root, image size and classes are the tool's defaults,
    so that its printed commands run as they are."""
    import inspect

    from mmengine.config import Config
    defaults = inspect.signature(coco_lvis.make_datasets).parameters
    for name, root in (('coco', 'coco'), ('lvis-v1', 'lvis_v1')):
        cfg = Config.fromfile(
            os.path.join(
                SMOKE_DIR, 'mask-rcnn_vitdet-tiny-p4-siameseim-pre_1xb2-1e_'
                f'smoke-{name}-128.py'))
        train = cfg.train_dataloader.dataset
        train = train.get('dataset', train)  # inside ClassBalancedDataset
        for ds in (train, cfg.val_dataloader.dataset):
            assert ds.data_root == f'data/smoke_det/{root}/'
        assert cfg.val_evaluator.ann_file.startswith(
            f'data/smoke_det/{root}/annotations/')
        size = defaults['img_size'].default
        assert tuple(train.pipeline[2].scale) == (size, size)
        val_pipeline = cfg.val_dataloader.dataset.pipeline
        assert tuple(val_pipeline[1].scale) == (size, size)
        num_classes = cfg.model.roi_head.bbox_head.num_classes
        assert num_classes == len(coco_lvis.CLASSES)
        if name == 'coco':  # CocoDataset selects categories by name
            assert tuple(train.metainfo.classes) == coco_lvis.CLASSES
