"""UnlabeledImageFolder on real photographs (issue 25 item 3): recursive, every
format and mode, sorted, symlinks once, hidden files counted; the damaged-file
policy (skip, name, count, stop above a fraction); the pre-scan; clear errors
for a missing, empty or unset folder."""
import os

import numpy as np
import pytest
from mmpretrain.registry import DATASETS
from PIL import Image

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets import (DamagedImagePolicy,
                                  TooManyDamagedImagesError, list_image_files)
from tests.helpers import logged
from tests.test_datasets.image_folder_photos import make_photo_folder

LOAD = dict(type='StrictLoadImageFromFile')


@pytest.fixture(scope='module')
def photos(tmp_path_factory):
    root = tmp_path_factory.mktemp('photos')
    expected, damaged = make_photo_folder(str(root))
    return str(root), expected, damaged


def _folder(data_root, **kwargs):
    return DATASETS.build(
        dict(
            type='UnlabeledImageFolder',
            data_root=data_root,
            pipeline=[LOAD],
            **kwargs))


def _rel(root, ds):
    return [
        os.path.relpath(ds.get_data_info(i)['img_path'], root)
        for i in range(len(ds))
    ]


def test_lists_every_image_recursively_sorted_once(photos):
    root, expected, damaged = photos
    with logged() as log:
        ds = _folder(root)
    assert _rel(root, ds) == sorted(list(expected) + damaged)
    # the log counts what was left out: 2 hidden images, the text file and
    # the symlink cycle e/loop -> root (not entered again)
    log = log.getvalue()
    assert f'{len(expected) + 1} images under {root}' in log
    assert '2 hidden image files left out' in log
    assert '1 files of other types ignored, e.g. notes.txt' in log
    assert 'e/loop' in log
    # hidden files are listed when asked
    listing = list_image_files(root, skip_hidden=False)
    assert '.thumbnails/grace.jpg' in listing.files
    assert 'a/._grace.JPG' in listing.files


@pytest.mark.fault_matrix(
    'datasets', 'image_mode', 'real photographs in every format and mode read '
    'as the 8-bit RGB a viewer shows')
def test_every_photo_reads_at_its_real_colours(photos):
    root, expected, damaged = photos
    ds = _folder(root)
    seen = set()
    for i in range(len(ds)):
        rel = _rel(root, ds)[i]
        if rel in damaged:
            continue
        out = ds[i]
        assert out['img_path'] == ds.get_data_info(i)['img_path']
        rgb = out['img'][..., ::-1]  # the loader gives BGR, as mmcv
        want, tol = expected[rel]
        assert rgb.shape == want.shape, rel
        diff = np.abs(rgb.astype(float) - want).mean()
        assert diff <= tol + 1e-9, f'{rel}: mean difference {diff:.2f}'
        seen.add(rel)
    assert seen == set(expected)
    assert ds.damage.num_damaged == 0


@pytest.mark.fault_matrix(
    'datasets', 'truncated',
    'a damaged image is skipped, named in the log and '
    'counted; another image takes its place')
def test_damaged_photo_skipped_named_and_counted(photos):
    root, expected, damaged = photos
    ds = _folder(root)
    bad = _rel(root, ds).index(damaged[0])
    with logged() as log:
        out = ds[bad]
    assert out is not None and out['img_path'] != ds.get_data_info(
        bad)['img_path']
    log = log.getvalue()
    assert os.path.join(root, damaged[0]) in log
    assert 'cannot load image' in log
    assert f'1 of 1 images read so far from {root}' in log
    assert ds.damage.num_damaged == 1 and ds.damage.reads == 2
    # a file found damaged is not read again
    ds[bad]
    assert ds.damage.num_damaged == 1


def _damaged_folder(root, good, bad):
    os.makedirs(root)
    for i in range(good):
        Image.new('RGB', (8, 8),
                  (i, 0, 0)).save(os.path.join(root, f'good{i}.png'))
    for i in range(bad):
        with open(os.path.join(root, f'bad{i}.jpg'), 'wb') as f:
            f.write(b'\xff\xd8\xff not really a jpeg')
    return root


@pytest.mark.fault_matrix(
    'datasets', 'truncated', 'more damaged images than max_damaged_fraction '
    '(and at least min_damaged) stop with an error '
    'naming them')
def test_stops_above_the_fraction_naming_the_files(tmp_path):
    root = _damaged_folder(str(tmp_path / 'imgs'), good=6, bad=3)
    ds = _folder(root, max_damaged_fraction=0.25, min_damaged=2)
    index = {name: i for i, name in enumerate(_rel(root, ds))}
    # prepare_data is one read, without mmengine's random replacement
    assert ds.prepare_data(index['bad0.jpg']) is None  # 1 of 1: < min
    for i in range(6):
        assert ds.prepare_data(index[f'good{i}.png']) is not None
    assert ds.prepare_data(index['bad1.jpg']) is None  # 2 of 8: 25 %
    assert ds.prepare_data(index['bad0.jpg']) is None  # not read again
    assert (ds.damage.num_damaged, ds.damage.reads) == (2, 8)
    with pytest.raises(TooManyDamagedImagesError) as e:
        ds.prepare_data(index['bad2.jpg'])  # 3 of 9: 33 % > 25 %
    msg = str(e.value)
    assert msg.startswith(f'3 of the 9 images read from {root} could not '
                          'be read: more than max_damaged_fraction=0.25 of '
                          'them (and at least min_damaged=2)')
    for name in ('bad0.jpg', 'bad1.jpg', 'bad2.jpg'):
        assert os.path.join(root, name) + ': cannot load image' in msg
    assert '--cfg-options train_dataloader.dataset.max_damaged_fraction' in \
        msg


def test_stops_when_every_image_is_damaged(tmp_path):
    """Fewer damaged files than min_damaged, but nothing else to read:

    mmengine's refetch would loop; the dataset stops naming them.
    """
    root = _damaged_folder(str(tmp_path / 'imgs'), good=0, bad=3)
    ds = _folder(root)  # min_damaged=10
    with pytest.raises(
            TooManyDamagedImagesError, match='every image is damaged'):
        ds[0]


def test_policy_counts_and_threshold():
    policy = DamagedImagePolicy(
        'folder', max_damaged_fraction=0.1, min_damaged=3)
    for _ in range(20):
        policy.ok()
    policy.damaged('a.jpg', 'a.jpg: truncated')
    policy.damaged('b.jpg', 'truncated')
    assert (policy.num_damaged, policy.reads) == (2, 22)
    assert not policy.should_stop()  # 2 < min_damaged
    with pytest.raises(
            TooManyDamagedImagesError,
            match=r'(?s)3 of the 23.*'
            r'a\.jpg: truncated.*b\.jpg: truncated'):
        policy.damaged('c.jpg', 'bad')
    # fraction 0 and min 1: stop at the first damaged image
    first = DamagedImagePolicy('folder', 0., 1)
    first.ok()
    with pytest.raises(TooManyDamagedImagesError, match='1 of the 2'):
        first.damaged('x.png', 'x.png: bad')
    # below the fraction no count stops it
    lenient = DamagedImagePolicy('folder', 0.5, 1)
    lenient.ok()
    lenient.damaged('x.png', 'bad')
    assert not lenient.should_stop()
    with pytest.raises(ValueError, match='max_damaged_fraction'):
        DamagedImagePolicy('folder', 1.5)
    with pytest.raises(ValueError, match='min_damaged'):
        DamagedImagePolicy('folder', 0.1, 0)


@pytest.mark.fault_matrix(
    'datasets', 'truncated',
    "verify='decode' leaves damaged images out before "
    "training, naming them; 'header' checks headers "
    'only')
def test_verify_prescan(photos):
    root, expected, damaged = photos
    with logged() as log:
        ds = _folder(root, verify='decode')
    assert sorted(_rel(root, ds)) == sorted(expected)
    assert os.path.join(root, damaged[0]) in log.getvalue()
    assert 'left out 1 damaged' in log.getvalue()
    assert ds.damage.reads == 0  # training counts afresh
    # a header check is fast but a truncated JPEG's header is whole
    header = _folder(root, verify=True)
    assert len(header) == len(expected) + 1
    with pytest.raises(ValueError, match="verify must be.*'pixels'"):
        _folder(root, verify='pixels')


def test_verify_header_catches_garbage_and_stops(tmp_path):
    root = _damaged_folder(str(tmp_path / 'imgs'), good=2, bad=3)
    with pytest.raises(TooManyDamagedImagesError, match='bad0.jpg'):
        _folder(root, verify='header', min_damaged=2)
    ds = _folder(root, verify='header', max_damaged_fraction=1.)
    assert _rel(root, ds) == ['good0.png', 'good1.png']


@pytest.mark.fault_matrix(
    'datasets', 'missing', 'a missing, empty or unset image folder is '
    'refused naming it and the extensions looked for')
def test_missing_empty_or_unset_folder(tmp_path):
    with pytest.raises(
            FileNotFoundError, match=f'{tmp_path}/nowhere.*does not exist'):
        _folder(str(tmp_path / 'nowhere'))
    empty = tmp_path / 'empty'
    (empty / 'sub').mkdir(parents=True)
    (empty / 'sub' / 'readme.md').write_text('x')
    (empty / '.hidden.jpg').write_bytes(b'x')
    with pytest.raises(FileNotFoundError) as e:
        _folder(str(empty))
    msg = str(e.value)
    assert str(empty) in msg and 'holds no image file' in msg
    assert '.jpg .jpeg .png .bmp .webp .tif .tiff' in msg
    assert '1 hidden image files left out' in msg
    assert 'sub/readme.md' in msg
    with pytest.raises(NotADirectoryError, match='readme.md'):
        _folder(str(empty / 'sub' / 'readme.md'))
    for unset in (None, ''):
        with pytest.raises(
                ValueError,
                match=r'data_root is not set.*'
                r'train_dataloader\.dataset\.data_root='):
            _folder(unset)


def test_extensions_case_and_options(tmp_path):
    root = tmp_path / 'imgs'
    (root / 'x').mkdir(parents=True)
    for name in ('a.PNG', 'b.Tiff', 'c.jpeg', 'd.gif'):
        Image.new('RGB', (4, 4)).save(root / 'x' / name)
    ds = _folder(str(root))
    assert _rel(str(root), ds) == ['x/a.PNG', 'x/b.Tiff', 'x/c.jpeg']
    gifs = _folder(str(root), extensions=['.GIF'])
    assert _rel(str(root), gifs) == ['x/d.gif']
    sub = _folder(str(tmp_path), data_prefix='imgs/x')
    assert len(sub) == 3
    with pytest.raises(ValueError, match='extensions'):
        _folder(str(root), extensions='.png')


def test_verify_header_refuses_unsupported_modes(tmp_path):
    root = tmp_path / 'imgs'
    root.mkdir()
    Image.new('RGB', (4, 4)).save(root / 'ok.png')
    Image.new('LAB', (4, 4)).save(root / 'lab.tif')
    with logged() as log:
        ds = _folder(str(root), verify='header', max_damaged_fraction=1.)
    assert _rel(str(root), ds) == ['ok.png']
    assert f"{root / 'lab.tif'}: image mode 'LAB' is not supported" in \
        log.getvalue()
