"""Write small COCO-2017 and LVIS-v1 style datasets from real pixels.

Fashion-MNIST items (thresholded for an exact instance mask) are pasted at
random positions and scales, one per cell of a 2x2 grid so none overlap, on
backgrounds made of other Fashion-MNIST images (tiled, blurred, tinted).
Objects of the train split come from Fashion-MNIST's train set, those of the
val split from its test set. Masks are stored as exact RLE.

Layout written under ``--out`` (the same as the real datasets, see
configs/benchmarks/mmdet/README.md)::

    coco/train2017/*.jpg  coco/val2017/*.jpg
    coco/annotations/instances_{train,val}2017.json
    lvis_v1/train2017/*.jpg  lvis_v1/val2017/*.jpg
    lvis_v1/annotations/lvis_v1_{train,val}.json

LVIS: every category has a ``frequency`` (r/c/f), ``image_count`` and
``instance_count`` (counted on train); images carry ``coco_url``,
``neg_category_ids`` (all categories verified absent — exact here) and an
empty ``not_exhaustive_category_ids``. Rare categories appear on exactly one
train image each and at least once in val, so AP_r is measurable.

Re-running with the same arguments does nothing (``smoke_meta.json``).
Command line: ``tools/dataset_converters/make_smoke_coco_lvis.py``; the
smoke configs that read these folders: ``configs/benchmarks/mmdet/smoke/``.
"""
import json
import os
import os.path as osp
import shutil
from typing import Optional

import cv2
import numpy as np
import pycocotools.mask as mask_util
from mmengine.utils import ProgressBar

from mmsiameseim.testing.fashion_mnist_arrays import load_fashion_mnist_arrays

CLASSES = ('tshirt_top', 'trouser', 'pullover', 'dress', 'coat', 'sandal',
           'shirt', 'sneaker', 'bag', 'ankle_boot')
RARE = ('bag', 'ankle_boot')
COMMON = ('shirt', 'sneaker')
FMNIST_SPLITS = {'train': 'train', 'val': 'test'}  # ours -> Fashion-MNIST
MASK_THRESHOLD = 40  # pixel value above which an item pixel is the object


def load_fashion_mnist(root: str, split: str):
    """Images (N, 28, 28) and labels (N, ) of one Fashion-MNIST split."""
    return load_fashion_mnist_arrays(root, FMNIST_SPLITS[split])


def make_background(rng, images, size: int) -> np.ndarray:
    """Blurred, tinted 4x4 mosaic of random Fashion-MNIST images (BGR)."""
    tiles = images[rng.integers(0, len(images), 16)]
    mosaic = tiles.reshape(4, 4, 28, 28).transpose(0, 2, 1, 3)
    mosaic = cv2.resize(mosaic.reshape(112, 112), (size, size))
    mosaic = cv2.GaussianBlur(mosaic, (0, 0), size / 32).astype(np.float32)
    tint = rng.uniform(0.3, 0.7, 3)
    return np.clip(mosaic[..., None] * tint + 20, 0, 255).astype(np.uint8)


def paste(rng, img, item, cell_xy, cell: int) -> np.ndarray:
    """Paste a scaled item inside one grid cell; return its exact mask."""
    side = int(28 * rng.uniform(1.0, min(2.0, cell / 28)))
    item = cv2.resize(item, (side, side), interpolation=cv2.INTER_LINEAR)
    x = cell_xy[0] + rng.integers(0, cell - side + 1)
    y = cell_xy[1] + rng.integers(0, cell - side + 1)
    mask = np.zeros(img.shape[:2], bool)
    mask[y:y + side, x:x + side] = item > MASK_THRESHOLD
    img[mask] = np.repeat(item[item > MASK_THRESHOLD][:, None], 3, axis=1)
    return mask


def mask_annotation(mask: np.ndarray) -> dict:
    """COCO ``segmentation`` (exact RLE), ``area`` and ``bbox`` of a mask."""
    rle = mask_util.encode(np.asfortranarray(mask.astype(np.uint8)))
    bbox = [float(v) for v in mask_util.toBbox(rle)]
    rle['counts'] = rle['counts'].decode('ascii')
    return dict(segmentation=rle, area=float(mask_util.area(rle)), bbox=bbox)


def sample_classes(rng, num: int, weights: np.ndarray) -> list:
    """``num`` class indices drawn with the given relative weights."""
    return list(rng.choice(len(CLASSES), num, p=weights / weights.sum()))


def make_split(rng, fmnist, num_images: int, size: int, img_dir: str,
               first_id: int, class_plan: list):
    """Draw images with the classes in ``class_plan`` (one list per image)
    and write them to ``img_dir``; return (images, annotations)."""
    images_pool, labels = fmnist
    by_class = [np.flatnonzero(labels == c) for c in range(len(CLASSES))]
    cell = size // 2
    images, anns = [], []
    bar = ProgressBar(num_images)
    for i in range(num_images):
        img_id = first_id + i
        img = make_background(rng, images_pool, size)
        cells = rng.permutation(4)[:len(class_plan[i])]
        for label, c in zip(class_plan[i], cells):
            item = images_pool[rng.choice(by_class[label])]
            mask = paste(rng, img, item, (c % 2 * cell, c // 2 * cell), cell)
            anns.append(
                dict(
                    id=len(anns) + first_id,
                    image_id=img_id,
                    category_id=int(label) + 1,
                    iscrowd=0,
                    **mask_annotation(mask)))
        file_name = f'{img_id:012d}.jpg'
        cv2.imwrite(
            osp.join(img_dir, file_name), img, [cv2.IMWRITE_JPEG_QUALITY, 95])
        images.append(
            dict(id=img_id, file_name=file_name, height=size, width=size))
        bar.update()
    print()
    return images, anns


def class_plans(rng, num_images: int, lvis: bool, train: bool) -> list:
    """Classes of each image: 1-3 objects; for LVIS the rare classes appear
    once each in train (first images) and at least once in val, and the
    common ones are drawn half as often as the frequent ones."""
    weights = np.ones(len(CLASSES))
    rare = [CLASSES.index(c) for c in RARE]
    if lvis:
        weights[[CLASSES.index(c) for c in COMMON]] = 0.5
        if train:
            weights[rare] = 0
    plans = [
        sample_classes(rng, int(rng.integers(1, 4)), weights)
        for _ in range(num_images)
    ]
    if lvis:
        if num_images < len(rare):
            raise ValueError(f'need at least {len(rare)} images per split '
                             f'for the rare classes, got {num_images}')
        for i, label in enumerate(rare):
            plans[i][0] = label
    return plans


def draw_split(layout_dir: str, rng, fmnist: dict, num: int, size: int,
               split: str, lvis: bool):
    """Images of ``split`` in ``layout_dir/{split}2017`` and their image and
    annotation records (ids from 1 on train, from 100001 on val)."""
    img_dir = osp.join(layout_dir, f'{split}2017')
    os.makedirs(img_dir)
    plans = class_plans(rng, num, lvis=lvis, train=split == 'train')
    return make_split(
        rng,
        fmnist[split],
        num,
        size,
        img_dir,
        first_id=1 if split == 'train' else 100001,
        class_plan=plans)


def write_coco(out: str, rng, fmnist: dict, num: int, size: int, split: str):
    """Images and ``instances_{split}2017.json`` of the COCO layout."""
    images, anns = draw_split(
        osp.join(out, 'coco'), rng, fmnist, num, size, split, lvis=False)
    categories = [
        dict(id=i + 1, name=n, supercategory='fashion')
        for i, n in enumerate(CLASSES)
    ]
    dump(
        dict(images=images, annotations=anns, categories=categories),
        osp.join(out, 'coco', 'annotations', f'instances_{split}2017.json'))


def write_lvis(out: str,
               rng,
               fmnist: dict,
               num: int,
               size: int,
               split: str,
               train_counts: Optional[dict] = None) -> dict:
    """Images and ``lvis_v1_{split}.json`` of the LVIS layout; returns the
    per-category counts (those of ``train_counts`` when given: LVIS
    frequencies are counted on train)."""
    images, anns = draw_split(
        osp.join(out, 'lvis_v1'), rng, fmnist, num, size, split, lvis=True)
    all_ids = set(range(1, len(CLASSES) + 1))
    for img in images:
        present = {
            a['category_id']
            for a in anns if a['image_id'] == img['id']
        }
        img['coco_url'] = ('http://images.cocodataset.org/'
                           f'{split}2017/{img.pop("file_name")}')
        img['neg_category_ids'] = sorted(all_ids - present)
        img['not_exhaustive_category_ids'] = []
    counts = train_counts or category_counts(anns)
    categories = []
    for i, name in enumerate(CLASSES):
        freq = 'r' if name in RARE else 'c' if name in COMMON else 'f'
        categories.append({
            'id': i + 1,
            'name': name,
            'synset': f'{name}.n.01',
            'synonyms': [name],
            'def': f'Fashion-MNIST class {name}',
            'frequency': freq,
            'image_count': counts[i + 1][0],
            'instance_count': counts[i + 1][1]
        })
    dump(
        dict(images=images, annotations=anns, categories=categories),
        osp.join(out, 'lvis_v1', 'annotations', f'lvis_v1_{split}.json'))
    return counts


def category_counts(anns) -> dict:
    """{category_id: (image_count, instance_count)}."""
    counts = {i + 1: (0, 0) for i in range(len(CLASSES))}
    for cat in counts:
        cat_anns = [a for a in anns if a['category_id'] == cat]
        counts[cat] = (len({a['image_id'] for a in cat_anns}), len(cat_anns))
    return counts


def dump(obj, path: str):
    """Write ``obj`` as JSON, making the folder."""
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(obj, f)


def make_datasets(fashion_mnist: str,
                  out: str,
                  num_train: int = 8,
                  num_val: int = 4,
                  img_size: int = 128,
                  seed: int = 0):
    """Write both datasets under ``out`` unless the same ones are there.

    Args:
        fashion_mnist (str): Folder of the un-gzipped Fashion-MNIST files.
        out (str): Writes ``out/coco``, ``out/lvis_v1`` and
            ``out/smoke_meta.json``.
        num_train (int): Images per training split. Defaults to 8.
        num_val (int): Images per validation split. Defaults to 4.
        img_size (int): Image side, at least 64. Defaults to 128, the size
            of the smoke configs.
        seed (int): Seed of every random choice. Defaults to 0.

    Raises:
        FileNotFoundError: The Fashion-MNIST files are missing.
        ValueError: ``img_size`` below 64, or too few images for LVIS's
            rare classes.
    """
    if img_size < 64:
        raise ValueError(f'--img-size must be >= 64 (two 28-pixel items per '
                         f'side), got {img_size}')
    meta = dict(
        num_train=num_train,
        num_val=num_val,
        img_size=img_size,
        seed=seed,
        classes=CLASSES,
        rare=RARE,
        common=COMMON)
    meta_path = osp.join(out, 'smoke_meta.json')
    if osp.isfile(meta_path):
        with open(meta_path) as f:
            if json.load(f) == json.loads(json.dumps(meta)):
                print(f'{out} already holds these datasets; nothing to do')
                return
    fmnist = {s: load_fashion_mnist(fashion_mnist, s) for s in FMNIST_SPLITS}
    for name in ('coco', 'lvis_v1', 'smoke_meta.json'):
        path = osp.join(out, name)
        if osp.isdir(path):
            shutil.rmtree(path)
        elif osp.exists(path):
            os.remove(path)
    rng = np.random.default_rng(seed)
    for split, num in (('train', num_train), ('val', num_val)):
        print(f'COCO {split}: {num} images')
        write_coco(out, rng, fmnist, num, img_size, split)
    print(f'LVIS v1 train: {num_train} images')
    counts = write_lvis(out, rng, fmnist, num_train, img_size, 'train')
    print(f'LVIS v1 val: {num_val} images')
    write_lvis(out, rng, fmnist, num_val, img_size, 'val', counts)
    dump(meta, meta_path)
    print(f'wrote {out}/coco and {out}/lvis_v1')
