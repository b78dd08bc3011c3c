"""mmsiameseim.testing.ade20k on real Fashion-MNIST."""
import hashlib
import os

import numpy as np
import pytest

from mmsiameseim.testing import ade20k

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FASHION = os.path.join(ROOT, 'data', 'fashion_mnist')


def _digest(root):
    h = hashlib.sha256()
    for dirpath, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            h.update(name.encode())
            with open(os.path.join(dirpath, name), 'rb') as f:
                h.update(f.read())
    return h.hexdigest()


def test_writes_ade20k_layout_that_mmseg_reads(tmp_path):
    root = ade20k.make_smoke_ade20k(
        FASHION, str(tmp_path), num_train=3, num_val=2, seed=1)
    assert root == str(tmp_path / 'ade' / 'ADEChallengeData2016')
    for split, n in (('training', 3), ('validation', 2)):
        assert len(os.listdir(os.path.join(root, 'images', split))) == n
        assert len(os.listdir(os.path.join(root, 'annotations', split))) == n

    from mmcv.transforms import LoadImageFromFile
    from mmseg.datasets import ADE20KDataset
    from mmseg.datasets.transforms import LoadAnnotations
    dataset = ADE20KDataset(
        data_root=root,
        reduce_zero_label=True,
        data_prefix=dict(
            img_path='images/training', seg_map_path='annotations/training'),
        pipeline=[
            LoadImageFromFile(),
            LoadAnnotations(reduce_zero_label=True)
        ])
    assert len(dataset) == 3
    ids = set(ade20k.FASHION_TO_ADE.values())
    assert len(ids) == 10
    for i in range(3):
        seg = dataset[i]['gt_seg_map']
        assert dataset[i]['img'].shape[:2] == seg.shape
        # Background (0) is ignored, classes are ADE ids - 1.
        assert set(np.unique(seg)) - {255} <= {k - 1 for k in ids}
        assert (seg != 255).any()
    # Idempotent: the same call gives the same bytes.
    first = _digest(root)
    ade20k.make_smoke_ade20k(
        FASHION, str(tmp_path), num_train=3, num_val=2, seed=1)
    assert _digest(root) == first
    # A smaller rerun leaves no stale files of the earlier one.
    ade20k.make_smoke_ade20k(
        FASHION, str(tmp_path), num_train=1, num_val=1, seed=1)
    assert len(os.listdir(os.path.join(root, 'images', 'training'))) == 1


def test_masks_are_exactly_the_pasted_item_pixels():
    images, labels = ade20k.load_fashion_mnist(FASHION, 'validation')
    rng = np.random.default_rng(0)
    for _ in range(5):
        image, annotation = ade20k.make_sample(images, labels, rng)
        assert image.shape == annotation.shape + (3, )
        assert (image[..., 0] == image[..., 2]).all()
        labelled = annotation > 0
        assert labelled.any()
        # Item pixels are the ones above the drawing threshold.
        assert (image[..., 0][labelled] > ade20k.ITEM_THRESHOLD).all()


def test_missing_fashion_mnist_is_a_clear_error(tmp_path):
    with pytest.raises(
            FileNotFoundError,
            match='train-images-idx3-ubyte.*dataset-fashion-mnist'):
        ade20k.make_smoke_ade20k(str(tmp_path / 'nothing'), str(tmp_path))
