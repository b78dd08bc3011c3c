"""The miniature downstream datasets (projects.downstream_miniature) on real
Fashion-MNIST: a box and an exact visible mask per instance, the classes and
LVIS's long tail as documented, validation painted from test items only,
the same files from the same seed, and a folder reused or refused."""
import filecmp
import json
import os

import cv2
import numpy as np
import pycocotools.mask as mask_util
import pytest

from mmsiameseim.testing.ade20k import FASHION_TO_ADE
from mmsiameseim.testing.coco_lvis import CLASSES
from mmsiameseim.testing.fashion_mnist_arrays import load_fashion_mnist_arrays
from projects.downstream_miniature import layouts, scenes
from tests.test_det.helpers import ROOT

FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')
# The smallest build with all three LVIS groups; 64 px keeps it quick (and
# crowded: items of 21-42 px overlap often).
SMALL = dict(num_train=300, num_val=24, img_size=64, holdout_fraction=0.1)


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('miniature') / 'data')
    return out, layouts.make_miniature_datasets(FMNIST, out, **SMALL)


def load(out, *parts):
    with open(os.path.join(out, *parts)) as f:
        return json.load(f)


def test_each_instance_has_a_box_and_exact_mask_that_agree(built):
    out, _ = built
    for layout, name in (('coco', 'instances_train2017.json'),
                         ('coco', 'instances_val2017.json'),
                         ('lvis_v1', 'lvis_v1_train.json')):
        data = load(out, layout, 'annotations', name)
        union = {}
        for ann in data['annotations']:
            mask = mask_util.decode(ann['segmentation']).astype(bool)
            assert mask.shape == (64, 64) and ann['iscrowd'] == 0
            assert mask.sum() == ann['area'] > 0
            ys, xs = np.nonzero(mask)
            assert ann['bbox'] == [
                xs.min(),
                ys.min(),
                xs.max() - xs.min() + 1,
                ys.max() - ys.min() + 1
            ]
            seen = union.setdefault(ann['image_id'], np.zeros_like(mask))
            assert not (seen & mask).any(), 'visible masks overlap'
            seen |= mask
        assert len(union) > 0.9 * len(data['images'])
    # ADE20k's maps are the COCO scenes' masks with FASHION_TO_ADE's ids.
    coco = load(out, 'coco', 'annotations', 'instances_val2017.json')
    ade = os.path.join(out, 'ade', 'ADEChallengeData2016')
    for i, image in enumerate(coco['images'][:8]):
        expected = np.zeros((64, 64), np.uint8)
        for ann in coco['annotations']:
            if ann['image_id'] == image['id']:
                mask = mask_util.decode(ann['segmentation']).astype(bool)
                expected[mask] = FASHION_TO_ADE[ann['category_id'] - 1]
        png = cv2.imread(
            os.path.join(ade, 'annotations', 'validation',
                         f'miniature_val_{i:06d}.png'), cv2.IMREAD_UNCHANGED)
        np.testing.assert_array_equal(png, expected)
        assert os.path.isfile(
            os.path.join(ade, 'images', 'validation',
                         f'miniature_val_{i:06d}.jpg'))


def test_classes_and_the_lvis_long_tail_as_documented(built):
    out, meta = built
    coco = load(out, 'coco', 'annotations', 'instances_train2017.json')
    assert [c['name'] for c in coco['categories']] == list(CLASSES)
    assert {a['category_id'] for a in coco['annotations']} == set(range(1, 11))
    train = load(out, 'lvis_v1', 'annotations', 'lvis_v1_train.json')
    val = load(out, 'lvis_v1', 'annotations', 'lvis_v1_val.json')
    assert val['categories'] == train['categories']
    groups = {}
    for cat in train['categories']:
        anns = [
            a for a in train['annotations'] if a['category_id'] == cat['id']
        ]
        images = {a['image_id'] for a in anns}
        assert cat['image_count'] == len(images)
        assert cat['instance_count'] == len(anns)
        # LVIS's rule: rare 1-10 training images, common 11-100, frequent
        assert cat['frequency'] == ('r' if len(images) <= 10 else
                                    'c' if len(images) <= 100 else 'f')
        groups.setdefault(cat['frequency'], []).append(cat['name'])
        planned = layouts.LVIS_TAIL_IMAGES.get(cat['id'] - 1)
        if planned:  # one per planned image, unless fully hidden
            assert planned - 3 <= len(images) <= planned
    assert groups == {
        'r': ['bag', 'ankle_boot'],
        'c': ['shirt', 'sneaker'],
        'f': ['tshirt_top', 'trouser', 'pullover', 'dress', 'coat', 'sandal']
    } == meta['lvis_groups']
    # every class, the rare ones included, is in the validation split
    assert {a['category_id'] for a in val['annotations']} == set(range(1, 11))
    for im in val['images']:
        present = {
            a['category_id']
            for a in val['annotations'] if a['image_id'] == im['id']
        }
        assert set(im['neg_category_ids']) == set(range(1, 11)) - present
        assert im['coco_url'].endswith(f'val2017/{im["id"]:012d}.jpg')


def test_validation_is_painted_from_test_items_only(built):
    out, meta = built
    labels = {
        split: load_fashion_mnist_arrays(FMNIST, split)[1]
        for split in ('train', 'test')
    }
    for layout, name, split in (
        ('coco', 'instances_train2017.json', 'train'),
        ('coco', 'instances_val2017.json', 'test'),
        ('lvis_v1', 'lvis_v1_train.json', 'train'),
        ('lvis_v1', 'lvis_v1_val.json', 'test'),
    ):
        data = load(out, layout, 'annotations', name)
        assert {im['fmnist_split'] for im in data['images']} == {split}
        for im in data['images']:
            assert max(im['background_fmnist_indices']) < len(labels[split])
        sources = [a['fmnist_index'] for a in data['annotations']]
        classes = [a['category_id'] - 1 for a in data['annotations']]
        np.testing.assert_array_equal(labels[split][sources], classes)
    # held-out training images: the last 10 %, beside the rest
    fit = load(out, 'coco', 'annotations', 'instances_train2017_fit.json')
    held = load(out, 'coco', 'annotations', 'instances_train2017_holdout.json')
    assert [im['id'] for im in held['images']] == list(range(271, 301))
    assert len(fit['images']) == 270 == 300 - meta['holdout_images']
    assert len(fit['annotations']) + len(held['annotations']) == \
        meta['counts']['coco_ade_train']['instances']
    ade = os.path.join(out, 'ade', 'ADEChallengeData2016')
    assert open(os.path.join(ade, 'holdout.txt')).read().split() == [
        f'miniature_train_{i:06d}' for i in range(270, 300)
    ]


def test_same_seed_same_files_and_the_folder_reused_or_refused(
        built, tmp_path):
    out, meta = built
    again = str(tmp_path / 'again')
    assert layouts.make_miniature_datasets(FMNIST, again, **SMALL) == meta
    for root, _, files in os.walk(out):
        rel = os.path.relpath(root, out)
        match, mismatch, errors = filecmp.cmpfiles(
            root, os.path.join(again, rel), files, shallow=False)
        assert not mismatch and not errors, (rel, mismatch, errors)
    stamp = os.path.getmtime(os.path.join(again, layouts.META))
    assert layouts.make_miniature_datasets(FMNIST, again, **SMALL) == meta
    assert os.path.getmtime(os.path.join(again, layouts.META)) == stamp

    with pytest.raises(FileExistsError, match='seed differ'):
        layouts.make_miniature_datasets(FMNIST, again, seed=1, **SMALL)
    os.remove(os.path.join(again, layouts.META))
    with pytest.raises(FileExistsError, match='partial or foreign'):
        layouts.make_miniature_datasets(FMNIST, again, **SMALL)
    os.makedirs(str(tmp_path / 'other.partial'))
    with pytest.raises(FileExistsError, match='interrupted'):
        layouts.make_miniature_datasets(FMNIST, str(tmp_path / 'other'),
                                        **SMALL)


def test_a_fully_hidden_item_is_dropped_and_counted(monkeypatch):
    monkeypatch.setattr(scenes, 'SCALE_RANGE', (1.5, 1.5))  # 42 px items
    images = np.full((2, 28, 28), 200, np.uint8)  # solid squares
    by_class = [np.array([0]), np.array([1])]
    scene = scenes.paint_scene(
        np.random.default_rng(0), images, by_class, [0, 1], size=42)
    assert scene.hidden == [(0, 0)]
    assert scene.labels == [1] and scene.sources == [1]
    assert (scene.owner == 0).all()
    assert (scene.semantic_map(FASHION_TO_ADE) == FASHION_TO_ADE[1]).all()
