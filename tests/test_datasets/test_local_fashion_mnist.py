"""LocalFashionMNIST with damaged files: each is named with its expected
and actual size (or header) and the set-up step, before anything is read
into a tensor; the files are left as they were."""
import gzip
import os
import os.path as osp

import pytest

import mmsiameseim  # noqa: F401
from tests.helpers import ROOT
from tests.user_files import snapshot

DATA = osp.join(ROOT, 'data', 'fashion_mnist')
FILES = ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
         't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')
pytestmark = pytest.mark.skipif(
    not all(osp.isfile(osp.join(DATA, f)) for f in FILES),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _folder(tmp_path, name, data):
    """A data folder whose file ``name`` holds ``data``, the other three
    linked to the real files."""
    root = tmp_path / 'fashion_mnist'
    root.mkdir()
    for f in FILES:
        if f != name:
            os.symlink(osp.join(DATA, f), root / f)
    (root / name).write_bytes(data)
    return root


def _build(root, test_mode):
    from mmpretrain.registry import DATASETS
    return DATASETS.build(
        dict(
            type='LocalFashionMNIST',
            data_prefix=str(root),
            test_mode=test_mode))


def _refused(root, test_mode, name):
    """The message of the refusal; the folder is as it was."""
    before = snapshot(root)
    with pytest.raises(ValueError) as err:
        _build(root, test_mode)
    assert snapshot(root) == before
    message = str(err.value)
    assert message.startswith(f'{root / name}: ')
    # the one setting, and where the files come from for a wheel's user
    assert message.endswith(
        "set the config's data_root to a folder that has them "
        '(`--cfg-options data_root=DIR` with tools/train.py or mim train), or '
        'put them there: the four files of '
        'https://github.com/zalandoresearch/fashion-mnist un-gzipped, or '
        "Debian's dataset-fashion-mnist (in a checkout, `bash "
        'tools/setup_env.sh` puts them in data/fashion_mnist/).')
    return message


def _real(name):
    with open(osp.join(DATA, name), 'rb') as f:
        return f.read()


@pytest.mark.fault_matrix(
    'datasets', 'empty', 'LocalFashionMNIST: refused naming the file, its '
    'size and the usual size, and the set-up step')
def test_an_empty_file_is_named_with_the_expected_size(tmp_path):
    """Before: ``invalid literal for int() with base 16: b''``."""
    root = _folder(tmp_path, 't10k-images-idx3-ubyte', b'')
    message = _refused(root, True, 't10k-images-idx3-ubyte')
    assert 'the file is empty: an idx file of 3-dimensional unsigned byte ' \
        'values was expected, at least its 16-byte header (7,840,016 bytes ' \
        'for the usual 10000 x 28 x 28 values). The Fashion-MNIST test ' \
        'files are damaged' in message


@pytest.mark.fault_matrix(
    'datasets', 'truncated', 'LocalFashionMNIST: refused naming the file, the '
    'size its header gives and its actual size')
def test_a_truncated_file_is_named_with_both_sizes(tmp_path):
    """Before: ``shape '[60000, 28, 28]' is invalid for input of size
    19999984``."""
    name = 'train-images-idx3-ubyte'
    root = _folder(tmp_path, name, _real(name)[:20_000_000])
    message = _refused(root, False, name)
    assert '20,000,000 bytes, but its header describes 60000 x 28 x 28 ' \
        'unsigned byte values, 47,040,016 bytes in all: the file is ' \
        'truncated. The Fashion-MNIST train files are damaged' in message


@pytest.mark.fault_matrix(
    'datasets', 'text', 'LocalFashionMNIST: a text (e.g. an HTML error '
    'page) or gzip file under the idx name is refused '
    'naming what it is')
@pytest.mark.parametrize('content, words', [
    (b'<!DOCTYPE html><html><body>404 Not Found</body></html>\n',
     'not an idx file of 1-dimensional unsigned byte values: its first 4 '
     'bytes are 0x3c21444f, 0x00000801 was expected; it is text, starting '
     "'<!DOCTYPE html><html><body>404 Not Found'"),
    ('gzip', 'the file is gzip-compressed; an idx file of 1-dimensional '
     'unsigned byte values was expected (un-gzip it)'),
])
def test_a_file_of_another_format_is_named(tmp_path, content, words):
    """Before: a bare AssertionError from mmpretrain's reader."""
    name = 't10k-labels-idx1-ubyte'
    if content == 'gzip':
        content = gzip.compress(_real(name))
    root = _folder(tmp_path, name, content)
    assert words in _refused(root, True, name)


def _idx(dims):
    """A complete idx file of unsigned bytes with these dimensions."""
    head = bytes([0, 0, 8, len(dims)]) + b''.join(
        d.to_bytes(4, 'big') for d in dims)
    size = 1
    for d in dims:
        size *= d
    return head + bytes(size)


@pytest.mark.fault_matrix(
    'datasets', 'samples', 'LocalFashionMNIST: no samples, or images and '
    'labels of different counts: refused naming both '
    'files and counts')
@pytest.mark.parametrize('labels', [5000, 0])
def test_labels_that_do_not_match_the_images_are_refused(tmp_path, labels):
    name = 't10k-labels-idx1-ubyte'
    root = _folder(tmp_path, name, _idx((labels, )))
    before = snapshot(root)
    with pytest.raises(ValueError) as err:
        _build(root, True)
    assert snapshot(root) == before
    assert str(err.value).startswith(
        f'{root / "t10k-images-idx3-ubyte"} holds 10000 images and '
        f'{root / name} {labels} labels: one label per image, at least one, '
        'was expected. The Fashion-MNIST test files are damaged')


def test_zero_images_and_zero_labels_are_refused(tmp_path):
    root = _folder(tmp_path, 't10k-labels-idx1-ubyte', _idx((0, )))
    (root / 't10k-images-idx3-ubyte').unlink()
    (root / 't10k-images-idx3-ubyte').write_bytes(_idx((0, 28, 28)))
    with pytest.raises(ValueError, match='holds 0 images and .* 0 labels'):
        _build(root, True)


def test_intact_files_load():
    dataset = _build(DATA, True)
    assert len(dataset) == 10000
    assert dataset.get_data_info(0)['img'].shape == (28, 28)


@pytest.mark.parametrize('test_mode', [True, False])
def test_the_samples_are_mmpretrains(test_mode):
    # the same images and labels, of the same types, as mmpretrain's own
    # FashionMNIST reads from these files
    import numpy as np
    from mmpretrain.datasets import FashionMNIST
    from mmpretrain.registry import DATASETS
    ours = DATASETS.build(
        dict(
            type='LocalFashionMNIST',
            data_prefix=DATA,
            test_mode=test_mode,
            serialize_data=False))
    theirs = FashionMNIST(
        data_root=DATA,
        test_mode=test_mode,
        download=False,
        split='test' if test_mode else 'train',
        serialize_data=False)
    assert len(ours) == len(theirs)
    for a, b in zip(ours.data_list, theirs.data_list):
        assert a.keys() == b.keys() == {'img', 'gt_label'}
        assert a['img'].dtype == b['img'].dtype == np.uint8
        assert a['img'].shape == b['img'].shape == (28, 28)
        assert a['gt_label'].dtype == b['gt_label'].dtype == np.int64
        assert a['gt_label'].shape == b['gt_label'].shape == ()
        assert int(a['gt_label']) == int(b['gt_label'])
    assert np.array_equal(
        np.stack([d['img'] for d in ours.data_list]),
        np.stack([d['img'] for d in theirs.data_list]))


@pytest.mark.person_matrix(
    'train', 'console', 'the Fashion-MNIST test loaders (test_mode=True): '
    "the test split read, with no 'split=\"train\" but test_mode=True. The "
    "training set will be used.' warning (which was false); a split that "
    'contradicts test_mode refused, naming both')
def test_the_split_follows_test_mode_without_a_false_warning():
    from mmpretrain.registry import DATASETS

    from tests.helpers import logged
    with logged() as log:
        test = _build(DATA, True)
    assert test.split == 'test' and len(test) == 10000
    assert 'test_mode=True' not in log.getvalue()
    assert _build(DATA, False).split == 'train'
    with pytest.raises(ValueError, match="split='test' with test_mode=False"):
        DATASETS.build(
            dict(
                type='LocalFashionMNIST',
                data_prefix=DATA,
                split='test',
                test_mode=False))
