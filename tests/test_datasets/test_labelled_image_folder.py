"""LabelledImageFolder: one folder per class in each split, the training
split's classes numbering every split, and what it refuses or names."""
import os
import shutil

import pytest

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets import LabelledImageFolder
from tests.helpers import logged
from tests.test_datasets.image_folder_photos import make_labelled_photo_folder


@pytest.fixture
def photos(tmp_path):
    root = tmp_path / 'photos'
    classes = make_labelled_photo_folder(str(root))
    return root, classes


def _labels(dataset):
    return [(os.path.relpath(d['img_path'], dataset.data_root), d['gt_label'])
            for d in dataset.data_list]


def test_splits_share_the_training_classes(photos):
    root, classes = photos
    assert classes == ['china', 'flower', 'grace', 'present']
    train = LabelledImageFolder(str(root), split='train', serialize_data=False)
    assert train.metainfo['classes'] == tuple(classes)
    assert len(train) == 12
    assert _labels(train)[:3] == [('train/china/0.jpg', 0),
                                  ('train/china/1.png', 0),
                                  ('train/china/2.tif', 0)]
    # a validation split without 'flower': the others keep their numbers
    # (mmpretrain's CustomDataset would number grace 1 and present 2)
    shutil.rmtree(root / 'val' / 'flower')
    with logged() as log:
        val = LabelledImageFolder(str(root), split='val', serialize_data=False)
    assert val.metainfo['classes'] == tuple(classes)
    assert sorted({label for _, label in _labels(val)}) == [0, 2, 3]
    assert 'LabelledImageFolder: 6 images of 3/4 classes in' in \
        log.getvalue()


def test_images_load_through_the_strict_loader(photos):
    root, _ = photos
    train = LabelledImageFolder(
        str(root),
        pipeline=[
            dict(type='StrictLoadImageFromFile'),
            dict(type='PackInputs')
        ])
    sample = train[0]
    assert tuple(sample['inputs'].shape) == (3, 64, 64)
    assert int(sample['data_samples'].gt_label) == 0
    assert train.get_data_info(2)['img_path'].endswith('china/2.tif')
    grey = train[2]['inputs']
    assert int(grey.max()) > 200  # 16-bit scaled to 8 bits, not clipped


def test_a_class_the_training_split_lacks_is_refused(photos):
    root, _ = photos
    os.makedirs(root / 'val' / 'zebra')
    with pytest.raises(ValueError) as e:
        LabelledImageFolder(str(root), split='val')
    assert 'has class folders that' in str(e.value)
    assert "['zebra']" in str(e.value)
    assert "class_split='train'" in str(e.value)


@pytest.mark.person_matrix(
    'datasets', 'own_folder', "a validation folder 'China' for the training "
    "class 'china': refused saying they differ only in case; training "
    'classes with no validation folder named (in the refusal, else in a '
    'warning)')
def test_a_class_that_differs_only_in_case_is_said_so(photos):
    root, _ = photos
    os.rename(root / 'val' / 'china', root / 'val' / 'China')
    shutil.rmtree(root / 'val' / 'flower')
    with pytest.raises(ValueError) as e:
        LabelledImageFolder(str(root), split='val')
    message = str(e.value)
    assert "has not: ['China']" in message
    assert "'China' differs from the class 'china' only in case" in message
    assert 'with no folder in' in message and "['china', 'flower']" in \
        message
    shutil.rmtree(root / 'val' / 'China')
    with logged() as log:
        LabelledImageFolder(str(root), split='val', serialize_data=False)
    assert 'with no folder in' in log.getvalue()
    assert "['china', 'flower']" in log.getvalue()


def test_loose_images_hidden_folders_and_empty_classes_are_named(photos):
    root, _ = photos
    shutil.copy(root / 'train' / 'china' / '0.jpg', root / 'train' / 'x.jpg')
    os.makedirs(root / 'train' / '.ipynb_checkpoints')
    os.makedirs(root / 'train' / 'empty')
    with logged() as log:
        train = LabelledImageFolder(str(root), serialize_data=False)
    log = log.getvalue()
    assert '1 images in' in log and 'are in no class folder' in log
    assert 'class folders without an image in' in log and "['empty']" in log
    assert train.metainfo['classes'] == ('china', 'empty', 'flower', 'grace',
                                         'present')
    assert len(train) == 12


def test_missing_settings_and_folders_are_named(tmp_path, photos):
    with pytest.raises(ValueError) as e:
        LabelledImageFolder(None)
    assert 'data_root is not set' in str(e.value)
    assert 'train_dataloader.dataset.data_root=DIR' in str(e.value)
    assert 'val_dataloader.dataset.data_root=DIR' in str(e.value)
    root, _ = photos
    with pytest.raises(FileNotFoundError, match="split='test'"):
        LabelledImageFolder(str(root), split='test')
    flat = tmp_path / 'flat' / 'train'
    os.makedirs(flat)
    with pytest.raises(FileNotFoundError, match='has no class sub-folders'):
        LabelledImageFolder(str(tmp_path / 'flat'))
    os.makedirs(flat / 'cats')
    (flat / 'cats' / 'notes.txt').write_text('not an image')
    with pytest.raises(FileNotFoundError, match='no image in the class'):
        LabelledImageFolder(str(tmp_path / 'flat'))
