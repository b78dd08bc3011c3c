import json
import os

import numpy as np
import pycocotools.mask as mask_util
import pytest

from tests.test_det.helpers import ROOT, load_tool

FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')


@pytest.fixture(scope='module')
def tool():
    return load_tool('make_smoke_coco_lvis')


def test_writes_coco_and_lvis_layouts_with_exact_masks(tool, tmp_path, capsys):
    import cv2
    tool.make_datasets(FMNIST, str(tmp_path), num_train=3, num_val=2,
                       img_size=64)
    ann_dir = tmp_path / 'coco' / 'annotations'
    coco = json.load(open(ann_dir / 'instances_val2017.json'))
    assert len(coco['images']) == 2 and len(coco['categories']) == 10
    for ann in coco['annotations']:
        mask = mask_util.decode(ann['segmentation'])
        assert mask.sum() == ann['area'] > 0
        ys, xs = np.nonzero(mask)
        assert ann['bbox'] == [xs.min(), ys.min(), xs.max() - xs.min() + 1,
                               ys.max() - ys.min() + 1]
    img = cv2.imread(str(tmp_path / 'coco/val2017' /
                         coco['images'][0]['file_name']))
    assert img.shape == (64, 64, 3) and img.std() > 10  # real pixels

    ann_dir = tmp_path / 'lvis_v1' / 'annotations'
    train = json.load(open(ann_dir / 'lvis_v1_train.json'))
    val = json.load(open(ann_dir / 'lvis_v1_val.json'))
    freq = {c['name']: c['frequency'] for c in train['categories']}
    assert freq['bag'] == freq['ankle_boot'] == 'r'
    assert set(freq.values()) == {'r', 'c', 'f'}
    for cat in train['categories']:
        anns = [a for a in train['annotations']
                if a['category_id'] == cat['id']]
        assert cat['instance_count'] == len(anns)
        assert cat['image_count'] == len({a['image_id'] for a in anns})
        if cat['frequency'] == 'r':
            assert cat['image_count'] == 1
    rare = {c['id'] for c in val['categories'] if c['frequency'] == 'r'}
    assert rare <= {a['category_id'] for a in val['annotations']}
    for im in val['images']:
        present = {a['category_id'] for a in val['annotations']
                   if a['image_id'] == im['id']}
        assert set(im['neg_category_ids']).isdisjoint(present)
        assert len(im['neg_category_ids']) + len(present) == 10
        assert im['not_exhaustive_category_ids'] == []
        rel = im['coco_url'].replace('http://images.cocodataset.org/', '')
        assert rel.startswith('val2017/')
        assert (tmp_path / 'lvis_v1' / rel).is_file()

    capsys.readouterr()
    tool.make_datasets(FMNIST, str(tmp_path), num_train=3, num_val=2,
                       img_size=64)
    assert 'nothing to do' in capsys.readouterr().out


def test_missing_fashion_mnist_is_a_clear_error(tool, tmp_path):
    with pytest.raises(FileNotFoundError, match='train-images-idx3-ubyte'):
        tool.make_datasets(str(tmp_path / 'none'), str(tmp_path / 'out'))


def test_cfg_options_are_valid_mim_arguments(tool):
    from mmengine.config import DictAction
    opts = tool.smoke_cfg_options('data/smoke_det', 'ckpt.pth', 'coco')
    parsed = {}
    for arg in tool.format_cfg_options(opts).split(' '):
        key, value = arg.strip("'").split('=', 1)
        parsed[key] = DictAction._parse_iterable(value)
    assert parsed['model.backbone.global_attn_indexes'] == [1, 3]
    assert parsed['train_dataloader.dataset.pipeline.2.scale'] == (128, 128)
    assert parsed['train_dataloader.dataset.metainfo.classes'] == tool.CLASSES
    assert 'train_dataloader.dataset.dataset.data_root' in \
        tool.smoke_cfg_options('d', 'c', 'lvis')
