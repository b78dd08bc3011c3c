"""A small segmentation dataset in ADE20k's on-disk layout.

Real Fashion-MNIST items (training items for the training split, test items
for the validation split) are enlarged and pasted on a background of blurred
Fashion-MNIST items; an item's mask is exactly the set of pixels it was drawn
on, so the annotation is exact by construction (later items occlude earlier
ones in image and annotation alike). The output is what mmseg's
``ADE20KDataset`` reads::

    OUT/ade/ADEChallengeData2016/images/{training,validation}/smoke_*.jpg
    OUT/ade/ADEChallengeData2016/annotations/{training,validation}/smoke_*.png

Annotation 0 is background (ignored under ``reduce_zero_label=True``, like
ADE20k's unlabelled pixels); the ten Fashion-MNIST classes take the ADE20k
label ids of ``FASHION_TO_ADE``. The same arguments always give the same
files; a rerun first removes the ``smoke_*`` files of an earlier run.
Command line: ``tools/dataset_converters/make_smoke_ade20k.py``; the smoke
config that reads it: ``configs/benchmarks/mmseg/smoke/``.
"""
import glob
import os
import os.path as osp
import sys
from typing import Tuple

import cv2
import numpy as np

from mmsiameseim.testing.fashion_mnist_arrays import load_fashion_mnist_arrays

# Fashion-MNIST class -> ADE20k label id (1-based, as in the annotation PNGs;
# mmseg's class index is id - 1). Ten distinct ids; only "bag" and "apparel"
# carry the item's meaning, the rest are other textile/object classes.
FASHION_TO_ADE = {
    0: 93,  # T-shirt/top -> apparel
    1: 82,  # Trouser     -> towel
    2: 132,  # Pullover    -> blanket
    3: 19,  # Dress       -> curtain
    4: 40,  # Coat        -> cushion
    5: 58,  # Sandal      -> pillow
    6: 150,  # Shirt       -> flag
    7: 109,  # Sneaker     -> plaything
    8: 116,  # Bag         -> bag
    9: 42,  # Ankle boot  -> box
}
SPLITS = dict(training='train', validation='test')  # ADE -> Fashion-MNIST
ITEM_THRESHOLD = 30  # pixel value above which an enlarged item is "drawn"


def load_fashion_mnist(root: str, split: str):
    """Images (N, 28, 28) uint8 and labels (N,) of one split, un-gzipped."""
    return load_fashion_mnist_arrays(root, SPLITS[split])


def make_sample(images: np.ndarray,
                labels: np.ndarray,
                rng,
                size_range: Tuple[int, int] = (96, 128),
                max_items: int = 3) -> Tuple[np.ndarray, np.ndarray]:
    """One (image HxWx3 uint8, annotation HxW uint8) pair.

    Args:
        images (np.ndarray): Fashion-MNIST items (N, 28, 28).
        labels (np.ndarray): Their classes (N, ).
        rng (np.random.Generator): Source of every random choice.
        size_range (tuple[int, int]): Range of the image sides.
        max_items (int): At most this many items (at least 1).
    """
    h, w = (int(s) for s in rng.integers(*size_range, endpoint=True, size=2))
    tiles = images[rng.integers(len(images), size=16)].reshape(4, 4, 28, 28)
    mosaic = tiles.transpose(0, 2, 1, 3).reshape(112, 112).astype(np.float32)
    background = cv2.GaussianBlur(cv2.resize(mosaic, (w, h)), (0, 0), 5)
    image = (0.4 * background + 20).astype(np.uint8)
    annotation = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(1, max_items, endpoint=True))):
        idx = int(rng.integers(len(images)))
        side = int(rng.integers(40, min(h, w) - 8, endpoint=True))
        item = cv2.resize(
            images[idx], (side, side), interpolation=cv2.INTER_LINEAR)
        top = int(rng.integers(0, h - side, endpoint=True))
        left = int(rng.integers(0, w - side, endpoint=True))
        drawn = item > ITEM_THRESHOLD
        image[top:top + side, left:left + side][drawn] = item[drawn]
        annotation[top:top + side, left:left + side][drawn] = \
            FASHION_TO_ADE[int(labels[idx])]
    return np.repeat(image[..., None], 3, axis=2), annotation


def make_smoke_ade20k(fashion_root: str,
                      out: str,
                      num_train: int = 64,
                      num_val: int = 16,
                      seed: int = 0) -> str:
    """Write the dataset; returns the ``ADEChallengeData2016`` directory.

    Args:
        fashion_root (str): Folder of the un-gzipped Fashion-MNIST files.
        out (str): Writes ``out/ade/ADEChallengeData2016``.
        num_train (int): Training images. Defaults to 64.
        num_val (int): Validation images. Defaults to 16.
        seed (int): Seed of every random choice. Defaults to 0.

    Raises:
        FileNotFoundError: The Fashion-MNIST files are missing.
    """
    from mmengine.utils import ProgressBar
    data_root = osp.join(out, 'ade', 'ADEChallengeData2016')
    counts = dict(training=num_train, validation=num_val)
    sources = {
        split: load_fashion_mnist(fashion_root, split)
        for split in counts
    }
    progress = ProgressBar(num_train + num_val)
    for split_id, (split, count) in enumerate(counts.items()):
        img_dir = osp.join(data_root, 'images', split)
        ann_dir = osp.join(data_root, 'annotations', split)
        for d in (img_dir, ann_dir):
            os.makedirs(d, exist_ok=True)
            for stale in glob.glob(osp.join(d, 'smoke_*')):
                os.remove(stale)
        for i in range(count):
            rng = np.random.default_rng([seed, split_id, i])
            image, annotation = make_sample(*sources[split], rng)
            name = f'smoke_{split}_{i:06d}'
            cv2.imwrite(
                osp.join(img_dir, name + '.jpg'), image,
                [cv2.IMWRITE_JPEG_QUALITY, 95])
            cv2.imwrite(osp.join(ann_dir, name + '.png'), annotation)
            progress.update()
    sys.stdout.write('\n')
    return data_root
