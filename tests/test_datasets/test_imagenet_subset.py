import pytest

from tests.helpers import make_tiny_imagenet


def _subset(root, **kwargs):
    from mmsiameseim.datasets import ImageNetSubset
    return ImageNetSubset(
        subset_file='1percent.txt',
        data_root=str(root),
        metainfo=dict(classes=('a', 'b', 'c')),
        serialize_data=False,
        **kwargs)


def test_listed_images_labelled_by_sorted_class_folder(tmp_path):
    listed = make_tiny_imagenet(tmp_path)
    data = _subset(tmp_path).data_list
    assert [d['img_path'] for d in data] == [
        str(tmp_path / 'train' / n.split('_')[0] / n) for n in listed
    ]
    # wnids n02 < n05 < n09 -> labels 0, 1, 2; unlisted images are not used
    assert [d['gt_label'] for d in data] == [0, 0, 1, 1, 2, 2]


def test_missing_images_are_named_and_counted(tmp_path):
    listed = make_tiny_imagenet(tmp_path)
    for name in listed[2:4]:
        (tmp_path / 'train' / name.split('_')[0] / name).unlink()
    with pytest.raises(FileNotFoundError) as err:
        _subset(tmp_path)
    first = tmp_path / 'train' / listed[2].split('_')[0] / listed[2]
    assert f'2 of the 6 images listed in {tmp_path}/1percent.txt are ' \
           f'missing, the first: {first}' in str(err.value)


def test_bad_lists_and_folders_are_refused(tmp_path):
    make_tiny_imagenet(tmp_path)
    with open(tmp_path / '1percent.txt', 'a') as f:
        f.write('n07000000_1.JPEG\n')
    with pytest.raises(
            ValueError,
            match=r'1 entries name no class folder'
            r".*'n07000000_1.JPEG'"):
        _subset(tmp_path)
    from mmsiameseim.datasets import ImageNetSubset
    with pytest.raises(
            ValueError,
            match='has 3 class folders but the '
            'dataset has 1000 classes'):
        ImageNetSubset(subset_file='1percent.txt', data_root=str(tmp_path))
    with pytest.raises(
            FileNotFoundError, match='subset list .*10percent.txt'
            ' not found'):
        ImageNetSubset(subset_file='10percent.txt', data_root=str(tmp_path))
