"""ImageNetWnidFolder / ImageNetC on the smoke layouts."""
import os

import pytest

from mmsiameseim.datasets import (IMAGENET_C_CORRUPTIONS, ImageNetC,
                                  ImageNetWnidFolder, load_wnid_to_label)


def test_labels_follow_the_training_list(smoke_imagenet):
    ann = str(smoke_imagenet / 'imagenet' / 'meta' / 'train.txt')
    wnid_to_label = load_wnid_to_label(ann)
    assert sorted(wnid_to_label, key=wnid_to_label.get) == \
        sorted(wnid_to_label)  # ImageNet order: sorted wnids
    ds = ImageNetWnidFolder(
        data_root=str(smoke_imagenet / 'imagenet-a'), class_map_ann_file=ann)
    folders = sorted(os.listdir(smoke_imagenet / 'imagenet-a'))
    assert ds.metainfo['class_subset'] == sorted(wnid_to_label[w]
                                                 for w in folders)
    for info in ds:
        wnid = os.path.basename(os.path.dirname(info['img_path']))
        assert info['gt_label'] == wnid_to_label[wnid]


def test_imagenet_c_records_corruption_and_severity(smoke_imagenet):
    ds = ImageNetC(
        data_root=str(smoke_imagenet / 'imagenet-c'),
        class_map_ann_file=str(smoke_imagenet / 'imagenet' / 'meta' /
                               'train.txt'))
    assert len(ds) == 15 * 5 * 10
    seen = {(d['corruption'], d['severity']) for d in ds}
    assert seen == {(c, s)
                    for c in IMAGENET_C_CORRUPTIONS
                    for s in range(1, 6)}
    first = ds[0]
    assert f"/{first['corruption']}/{first['severity']}/" in \
        first['img_path']


def test_bad_layouts_are_named(smoke_imagenet, tmp_path):
    ann = str(smoke_imagenet / 'imagenet' / 'meta' / 'train.txt')
    (tmp_path / 'n99999999').mkdir()
    (tmp_path / 'n99999999' / 'x.jpg').write_bytes(b'')
    with pytest.raises(ValueError, match='not ImageNet-1k classes'):
        ImageNetWnidFolder(data_root=str(tmp_path), class_map_ann_file=ann)
    with pytest.raises(FileNotFoundError, match='class_map_ann_file'):
        ImageNetWnidFolder(
            data_root=str(tmp_path),
            class_map_ann_file=str(tmp_path / 'none.txt'))
    with pytest.raises(FileNotFoundError, match='speckle_noise'):
        ImageNetC(
            data_root=str(smoke_imagenet / 'imagenet-c'),
            class_map_ann_file=ann,
            corruptions=['speckle_noise'])
    bad = tmp_path / 'bad.txt'
    bad.write_text('n01440764_1.JPEG 0\n')
    with pytest.raises(ValueError, match='bad.txt:1'):
        load_wnid_to_label(str(bad))
