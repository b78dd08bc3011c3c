"""Symlinked images are read once (issue 37): the folder scanners drop a
second path to an image already listed (keeping the first in sorted order)
and say so, keep a link to an image outside the folder, and do not hang on
symlinked folders that make loops."""
import os
import signal
from contextlib import contextmanager

import pytest
from mmpretrain.registry import DATASETS

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets import LabelledImageFolder, list_image_files
from tests.helpers import logged
from tests.test_datasets.image_folder_photos import (
    make_labelled_photo_folder, sample_photos)


@contextmanager
def deadline(seconds):
    """Fail instead of hanging (a scan caught in a symlink loop)."""

    def _raise(*_):
        raise TimeoutError(f'still scanning after {seconds} s')

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def make_linked_folder(tmp_path):
    """``photos/`` with two real images, links to them inside, a link to an
    image outside, and two loops of symlinked folders."""
    photos = sample_photos(width=48)
    root = tmp_path / 'photos'
    (root / 'a').mkdir(parents=True)
    (root / 'b').mkdir()
    photos['grace'].save(root / 'a' / 'grace.jpg')
    photos['china'].save(root / 'b' / 'china.png')
    outside = tmp_path / 'elsewhere'
    outside.mkdir()
    photos['flower'].save(outside / 'flower.jpg')
    os.symlink('grace.jpg', root / 'a' / 'grace_again.jpg')
    os.symlink('../a/grace.jpg', root / 'b' / 'grace_link.jpg')
    # sorts before b/china.png: this one is kept, the real file dropped
    os.symlink('b/china.png', root / '0_china.png')
    os.symlink(str(outside / 'flower.jpg'), root / 'b' / 'flower.jpg')
    os.symlink('..', root / 'a' / 'loop')  # a -> root -> a ...
    (root / 'x').mkdir()
    (root / 'z').mkdir()
    os.symlink('../z', root / 'x' / 'to_z')  # x <-> z
    os.symlink('../x', root / 'z' / 'to_x')
    return root


@pytest.mark.person_matrix(
    'datasets', 'symlink', 'an image reached through a symlink is listed '
    'once, the first path in sorted order, and the rest named in a warning')
def test_list_image_files_lists_each_image_once(tmp_path):
    root = make_linked_folder(tmp_path)
    with deadline(30), logged() as log:
        listing = list_image_files(str(root), what='test folder')
    assert listing.files == ['0_china.png', 'a/grace.jpg', 'b/flower.jpg']
    assert sorted(listing.duplicates) == [
        ('a/grace_again.jpg', 'a/grace.jpg'),
        ('b/china.png', '0_china.png'),
        ('b/grace_link.jpg', 'a/grace.jpg'),
    ]
    log = log.getvalue()
    assert 'test folder: 3 image paths under' in log
    assert 'left out' in log
    assert 'e.g. a/grace_again.jpg is a/grace.jpg' in log


@pytest.mark.person_matrix(
    'datasets', 'symlink', 'UnlabeledImageFolder reads a symlinked image '
    'once, keeps a link to an image outside, and does not hang on loops')
def test_unlabeled_folder_reads_each_image_once(tmp_path):
    root = make_linked_folder(tmp_path)
    with deadline(30), logged() as log:
        ds = DATASETS.build(
            dict(
                type='UnlabeledImageFolder',
                data_root=str(root),
                pipeline=[dict(type='StrictLoadImageFromFile')]))
    paths = [ds.get_data_info(i)['img_path'] for i in range(len(ds))]
    assert [os.path.relpath(p, root)
            for p in paths] == ['0_china.png', 'a/grace.jpg', 'b/flower.jpg']
    assert len({os.path.realpath(p) for p in paths}) == 3
    assert ds[2]['img'].shape[1] == 48  # the outside image reads
    log = log.getvalue()
    assert '3 images under' in log
    assert '3 symlinks to an image already listed left out' in log
    assert 'a/loop' in log  # the loop, not entered again


@pytest.mark.person_matrix(
    'datasets', 'symlink', 'LabelledImageFolder reads an image linked from '
    'a second class once, with the first class, and names it')
def test_labelled_folder_reads_each_image_once(tmp_path):
    root = tmp_path / 'labelled'
    make_labelled_photo_folder(str(root))
    train = root / 'train'
    # a link inside one class, and one that puts a china image in 'grace'
    os.symlink('0.jpg', train / 'china' / '9.jpg')
    os.symlink('../china/1.png', train / 'grace' / 'from_china.png')
    os.symlink('..', train / 'flower' / 'loop')
    with deadline(30), logged() as log:
        ds = LabelledImageFolder(str(root), serialize_data=False)
    assert len(ds) == 12
    reals = [os.path.realpath(d['img_path']) for d in ds.data_list]
    assert len(set(reals)) == 12
    china_1 = [
        d['gt_label'] for d in ds.data_list
        if d['img_path'].endswith('china/1.png')
    ]
    assert china_1 == [0]
    log = log.getvalue()
    assert 'e.g. 9.jpg is 0.jpg' in log
    assert not any(d['img_path'].endswith('from_china.png')
                   for d in ds.data_list)
    # the loop (flower/loop -> train) reaches every class again: the first
    # example is one of those
    assert '(a symbolic link) labels the image china/0.jpg with a second ' \
        'class; it keeps the class of china/0.jpg' in log
