"""The fault matrix of the ImageNet-layout datasets (ImageNetSubset,
ImageNetWnidFolder, ImageNetC): a missing, empty or malformed list or
folder is refused when the dataset is built, naming the file, what was
expected and what was found; the files are left as they were.

(Damaged image files are the image loading's: test_strict_loading.py.)
"""
import pytest

from mmsiameseim.datasets import ImageNetC, ImageNetSubset, ImageNetWnidFolder
from tests.helpers import make_tiny_imagenet
from tests.user_files import snapshot

WNIDS = ('n01440764', 'n01443537')


def _subset(root, subset_file='1percent.txt'):
    return ImageNetSubset(
        subset_file=subset_file,
        data_root=str(root),
        metainfo=dict(classes=('a', 'b', 'c')),
        serialize_data=False)


def _refused(root, error, build):
    before = snapshot(root)
    with pytest.raises(error) as err:
        build()
    assert snapshot(root) == before
    return str(err.value)


def _wnid_layout(root, images=1):
    """``<root>/test/<wnid>/`` with ``images`` files each, and the training
    list ``<root>/train.txt`` giving the labels."""
    root.mkdir(exist_ok=True)
    (root / 'train.txt').write_text(''.join(f'{w}/{w}_1.JPEG {i}\n'
                                            for i, w in enumerate(WNIDS)))
    for wnid in WNIDS:
        (root / 'test' / wnid).mkdir(parents=True)
        for n in range(images):
            (root / 'test' / wnid / f'{n}.jpg').write_bytes(b'\xff\xd8')
    return dict(
        data_root=str(root / 'test'),
        class_map_ann_file=str(root / 'train.txt'))


@pytest.mark.fault_matrix(
    'datasets', 'missing', 'ImageNetSubset / ImageNetWnidFolder / ImageNetC: '
    'a missing list, class map, folder or listed '
    'image is named (with the count of missing images)')
def test_missing_lists_folders_and_images_are_named(tmp_path):
    listed = make_tiny_imagenet(tmp_path / 'in')
    message = _refused(tmp_path, FileNotFoundError,
                       lambda: _subset(tmp_path / 'in', '10percent.txt'))
    assert message == f'subset list {tmp_path}/in/10percent.txt not found'
    image = tmp_path / 'in' / 'train' / listed[0].split('_')[0] / listed[0]
    image.unlink()
    message = _refused(tmp_path, FileNotFoundError,
                       lambda: _subset(tmp_path / 'in'))
    assert message == (f'1 of the 6 images listed in {tmp_path}/in/'
                       f'1percent.txt are missing, the first: {image}')
    args = _wnid_layout(tmp_path / 'wnid')
    message = _refused(
        tmp_path, FileNotFoundError,
        lambda: ImageNetC(**args, corruptions=['fog'], severities=[1]))
    assert message == (f"ImageNet-C folder '{tmp_path}/wnid/test/fog/1' is "
                       "missing (corruption 'fog', severity 1)")
    message = _refused(
        tmp_path, FileNotFoundError, lambda:
        (ImageNetWnidFolder(**dict(args, class_map_ann_file='meta/x.txt'))))
    assert message.startswith("class_map_ann_file 'meta/x.txt' not found")


@pytest.mark.fault_matrix(
    'datasets', 'empty', 'ImageNetSubset: an empty list, ImageNetWnidFolder: '
    'an empty class map: refused naming the file')
def test_empty_lists_are_refused(tmp_path):
    """Before: an empty subset list gave a dataset of no samples."""
    make_tiny_imagenet(tmp_path / 'in')
    (tmp_path / 'in' / '1percent.txt').write_text('\n')
    message = _refused(tmp_path, ValueError, lambda: _subset(tmp_path / 'in'))
    assert message == (f'subset list {tmp_path}/in/1percent.txt lists no '
                       'image (one <wnid>_<n>.JPEG per line was expected)')
    args = _wnid_layout(tmp_path / 'wnid')
    (tmp_path / 'wnid' / 'train.txt').write_text('')
    message = _refused(tmp_path, ValueError,
                       lambda: ImageNetWnidFolder(**args))
    assert message == f'{tmp_path}/wnid/train.txt lists no samples'


@pytest.mark.fault_matrix(
    'datasets', 'text', 'a list or class map of another format: refused '
    'naming the file and line, what was expected and '
    'what it holds')
def test_lists_of_another_format_are_named_with_the_line(tmp_path):
    make_tiny_imagenet(tmp_path / 'in')
    (tmp_path / 'in' / '1percent.txt').write_text(
        'train/n02000002/n02000002_0.JPEG 0\n')  # mmpretrain's format
    message = _refused(tmp_path, ValueError, lambda: _subset(tmp_path / 'in'))
    assert '1 entries name no class folder of' in message
    assert "e.g. ['train/n02000002/n02000002_0.JPEG 0'] (expected " \
        '<wnid>_<n>.JPEG per line)' in message
    args = _wnid_layout(tmp_path / 'wnid')
    (tmp_path / 'wnid' / 'train.txt').write_text(f'{WNIDS[0]}_1.JPEG 0\n')
    message = _refused(tmp_path, ValueError,
                       lambda: ImageNetWnidFolder(**args))
    assert message == (f'{tmp_path}/wnid/train.txt:1: expected '
                       "\"<wnid>/<file> <label>\", got 'n01440764_1.JPEG 0'")


@pytest.mark.fault_matrix(
    'datasets', 'samples', 'ImageNetWnidFolder: a class folder without images '
    'or no class folder at all: refused naming it')
def test_folders_without_images_are_refused(tmp_path):
    args = _wnid_layout(tmp_path, images=0)
    message = _refused(tmp_path, ValueError,
                       lambda: ImageNetWnidFolder(**args))
    assert message == (f'{tmp_path}/test/{WNIDS[0]} holds no image (.jpg, '
                       '.jpeg, .png)')
    for wnid in WNIDS:
        (tmp_path / 'test' / wnid).rmdir()
    message = _refused(tmp_path, ValueError,
                       lambda: ImageNetWnidFolder(**args))
    assert message == f'{tmp_path}/test holds no class folder'
