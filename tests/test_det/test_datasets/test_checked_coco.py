"""Your own COCO / LVIS annotations, checked when the dataset is built: bad
annotations named with their image and annotation id, counted, dropped,
and refused above max_bad_annotation_fraction; class names the file lacks
refused; LVIS classes from the file."""
import copy
import json
import os

import pytest

import mmsiameseim.det  # noqa: F401
from mmsiameseim.det.datasets import (CheckedCocoDataset, CheckedLVISV1Dataset,
                                      annotation_problem)
from tests.helpers import logged_warnings
from tests.test_det.helpers import OWN_CLASSES, make_own_coco

IMG = dict(id=1, file_name='a.jpg', width=100, height=80)


@pytest.fixture(scope='module')
def own(tmp_path_factory):
    root = tmp_path_factory.mktemp('own_coco')
    return str(root), make_own_coco(str(root), num_train=4, num_val=1)


def write(root, data, name='bad.json'):
    path = os.path.join(root, 'annotations', name)
    with open(path, 'w') as f:
        json.dump(data, f)
    return path


def build(root, ann_file, **kwargs):
    return CheckedCocoDataset(
        data_root=root,
        ann_file=ann_file,
        data_prefix=dict(img='train2017/'),
        metainfo=dict(classes=OWN_CLASSES),
        pipeline=[],
        **kwargs)


def ann(**kw):
    base = dict(
        id=7,
        image_id=1,
        category_id=1,
        bbox=[10, 10, 20, 20],
        area=400.,
        iscrowd=0,
        segmentation=[[10, 10, 30, 10, 30, 30, 10, 30]])
    return dict(base, **kw)


@pytest.mark.parametrize(
    'wrong,says',
    [(dict(category_id=9), "category_id 9 is not one of the file's"),
     (dict(bbox=[120, 10, 20, 20]), 'lies outside its 100 x 80 image'),
     (dict(bbox=[90, 10, 40, 20]), 'reaches past its 100 x 80 image'),
     (dict(bbox=[10, 10, 0.5, 20]), 'degenerate'),
     (dict(bbox=[10, 10, 20]), 'is not 4 finite numbers'),
     (dict(area=0), 'area 0 is not positive'),
     (dict(segmentation=[]), 'no segmentation'),
     (dict(segmentation=[[10, 10, 30, 10]]), 'polygon 0 has 4 coordinates'),
     (dict(segmentation=[[10, 10, 20, 20, 30, 30]]), 'encloses no area'),
     (dict(segmentation=dict(size=[10, 10], counts='x')),
      'RLE mask has size [10, 10], but the image is [80, 100]')])
def test_each_kind_of_bad_annotation_is_named(wrong, says):
    assert annotation_problem(ann(), IMG, {1: {}}, with_mask=True) is None
    problem = annotation_problem(ann(**wrong), IMG, {1: {}}, with_mask=True)
    assert problem is not None and says in problem, problem


@pytest.mark.person_matrix(
    'detection', 'bad_annotations', 'a box outside its image, an unknown '
    'category id and a degenerate polygon are named with image and '
    'annotation id, counted and dropped with a WARNING; above '
    'max_bad_annotation_fraction the dataset is refused')
def test_bad_annotations_warned_below_and_refused_above_the_fraction(own):
    root, data = own
    train = copy.deepcopy(data['train'])
    anns = train['annotations']  # 8: a disc and a square on 4 photos
    first = train['images'][0]
    anns[0]['bbox'] = [first['width'] + 5, 3, 10, 10]  # outside the image
    anns[3]['category_id'] = 42  # not in categories
    anns[5]['segmentation'] = [[1, 1, 2, 2]]  # two points
    path = write(root, train)
    with pytest.raises(ValueError) as e:
        build(root, path)
    text = str(e.value)
    assert f'3 of the 8 annotations in {path} are bad' in text
    assert 'max_bad_annotation_fraction=0.01' in text
    assert ('--cfg-options train_dataloader.dataset.'
            'max_bad_annotation_fraction=F') in text
    assert (f'image {first["file_name"]} (id {first["id"]}), annotation id '
            f'{anns[0]["id"]}: bbox') in text
    assert f'annotation id {anns[3]["id"]}: category_id 42' in text
    assert f'annotation id {anns[5]["id"]}: polygon 0 has 4' in text

    with logged_warnings() as warned:
        ds = build(root, path, max_bad_annotation_fraction=0.5)
    assert len(warned) == 1 and '3 of the 8 annotations' in warned[0]
    assert 'and dropped' in warned[0]
    instances = sum(
        len(ds.get_data_info(i)['instances']) for i in range(len(ds)))
    assert instances == 5  # the three bad ones dropped, the rest kept


def test_good_annotations_load_without_a_warning(own):
    root, _ = own
    with logged_warnings() as warned:
        ds = build(root, 'annotations/instances_train2017.json')
    assert not warned
    assert len(ds) == 4
    assert all(
        len(ds.get_data_info(i)['instances']) == 2 for i in range(len(ds)))


def test_orphan_annotations_and_validation_sets_say_the_metric_counts_them(
        own):
    root, data = own
    val = copy.deepcopy(data['val'])
    val['annotations'].append(dict(val['annotations'][0], id=99, image_id=5))
    path = write(root, val, 'orphan.json')
    with pytest.raises(ValueError) as e:
        build(root, path, test_mode=True)
    assert 'annotation id 99: image_id 5 is not one of the file' in str(
        e.value)
    assert 'val_dataloader.dataset.max_bad_annotation_fraction' in str(e.value)


@pytest.mark.person_matrix(
    'detection', 'own_folder', 'a COCO file whose categories are not the '
    "config's classes (COCO's 80 by default) is refused when the dataset "
    "is built, listing the file's categories and the option to set")
def test_class_names_the_file_lacks_are_refused(own):
    root, _ = own
    with pytest.raises(ValueError) as e:
        CheckedCocoDataset(
            data_root=root,
            ann_file='annotations/instances_train2017.json',
            data_prefix=dict(img='train2017/'),
            pipeline=[])
    text = str(e.value)
    # cat and dog are two of COCO's 80: mmdet would train 80 classes on them
    assert '78 of the 80 classes are not categories of' in text
    assert "the file has 2: 'cat', 'dog'" in text
    assert 'train_dataloader.dataset.metainfo.classes=[...]' in text


def test_lvis_classes_come_from_the_file(tmp_path):
    from mmsiameseim.testing.coco_lvis import CLASSES, make_datasets
    from tests.test_det.helpers import ROOT
    make_datasets(
        os.path.join(ROOT, 'data', 'fashion_mnist'),
        str(tmp_path),
        num_train=3,
        num_val=2,
        img_size=64)
    root = str(tmp_path / 'lvis_v1')
    ds = CheckedLVISV1Dataset(
        data_root=root,
        ann_file='annotations/lvis_v1_train.json',
        data_prefix=dict(img=''),
        pipeline=[])
    assert ds.metainfo['classes'] == CLASSES
    with open(os.path.join(root, 'annotations', 'lvis_v1_train.json')) as f:
        lvis = json.load(f)
    lvis['annotations'][0]['bbox'] = [1000, 1000, 5, 5]
    path = os.path.join(root, 'annotations', 'bad.json')
    with open(path, 'w') as f:
        json.dump(lvis, f)
    with pytest.raises(ValueError) as e:
        CheckedLVISV1Dataset(
            data_root=root,
            ann_file=path,
            data_prefix=dict(img=''),
            pipeline=[])
    assert 'lies outside its 64 x 64 image' in str(e.value)
    assert 'train_dataloader.dataset.dataset.max_bad_annotation_fraction' in \
        str(e.value)
