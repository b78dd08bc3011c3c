"""Miniature data in the on-disk formats the shipped configs read.

Every dataset path of a shipped benchmark or ImageNet config starts with
``data/`` (``data/imagenet``, ``data/imagenet-c``, ``data/coco``,
``data/lvis_v1``, ``data/ade/ADEChallengeData2016``, ...). A preflight points
that prefix at a folder holding the same layout: the user's real data
(``--data-root DIR``) or a miniature written here by the smoke painters of
:mod:`mmsiameseim_lab.smoke` from real Fashion-MNIST pixels:

- ImageNet class folders of JPEGs with ``meta/*.txt``, the 1 % list, and the
  A / R / Sketch / C test-set layouts (:mod:`~mmsiameseim_lab.smoke.imagenet`);
- COCO and LVIS v1 JSON with images and **polygon** instance masks (the
  painter writes exact RLE; real COCO / LVIS store objects as polygons, so
  they are converted here), COCO categories renamed to COCO class names so
  that mmdet's ``CocoDataset`` keeps them;
- ADE20k image and annotation folders (:mod:`~mmsiameseim_lab.smoke.ade20k`).

The own-images configs (``*_folder.py``) ship ``UnlabeledImageFolder`` without
a ``data_root`` (the user gives it): a preflight points it at the miniature
ImageNet's training JPEGs, read recursively without labels.

The Fashion-MNIST configs read the real Fashion-MNIST (``LocalFashionMNIST``).
"""
import json
import math
import os
import os.path as osp
from typing import Any, Iterable, Optional, Set

from ..results import REPO
from .schedule import inner_dataset

PREFIX = 'data/'
FASHION_MNIST = osp.join(REPO, 'data', 'fashion_mnist')
# top-level folder under data/ -> the miniature that provides it
PROVIDERS = {
    'imagenet': 'imagenet',
    'imagenet-a': 'imagenet',
    'imagenet-r': 'imagenet',
    'imagenet-sketch': 'imagenet',
    'imagenet-c': 'imagenet',
    'coco': 'coco_lvis',
    'lvis_v1': 'coco_lvis',
    'ade': 'ade20k',
}
IMAGENET_SIZE = 288  # > 256: the test resize and the crops shrink it
COCO_SIZE = 640  # COCO's long side; LSJ rescales it by 0.1-2.0 of 1024

IMAGE_FOLDER = PREFIX + 'imagenet/train'


def fill_image_folder(cfg: dict) -> Optional[str]:
    """Give an ``UnlabeledImageFolder`` training set without ``data_root``
    the folder :data:`IMAGE_FOLDER` (under ``data/``, so re-rooted like any
    other path), in place; returns the override line, or None."""
    loader = cfg.get('train_dataloader') or {}
    dataset = inner_dataset(loader.get('dataset') or {})
    if dataset.get('type') != 'UnlabeledImageFolder' or dataset.get(
            'data_root'):
        return None
    dataset['data_root'] = IMAGE_FOLDER
    return (f'train_dataloader.dataset.data_root unset -> {IMAGE_FOLDER} '
            '(JPEGs in class folders, read recursively without labels)')


def _strings(obj: Any) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def data_folders(cfg: dict) -> Set[str]:
    """The folders under ``data/`` that a config's strings name."""
    return {
        s[len(PREFIX):].split('/')[0]
        for s in _strings(cfg) if s.startswith(PREFIX) and len(s) > len(PREFIX)
    }


def point_data_root(obj: Any, root: str) -> Any:
    """``obj`` with every string that starts with ``data/`` re-rooted at
    ``root`` (the folder that plays ``data/``)."""
    if isinstance(obj, str):
        return osp.join(root,
                        obj[len(PREFIX):]) if obj.startswith(PREFIX) else obj
    if isinstance(obj, dict):
        return type(obj)({k: point_data_root(v, root) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return type(obj)(point_data_root(v, root) for v in obj)
    return obj


def _polygons(segmentation: dict) -> list:
    """Outer contours of an RLE mask as COCO polygons (x, y, x, y, ...)."""
    import cv2
    import numpy as np
    import pycocotools.mask as mask_util
    mask = mask_util.decode(segmentation).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    return [
        c.reshape(-1).astype(float).tolist() for c in contours if len(c) >= 3
    ]


def to_polygons(ann_file: str, rename: Optional[list] = None) -> None:
    """Rewrite a painted COCO / LVIS annotation file with polygon masks
    (objects whose mask has no 3-point contour are dropped) and, with
    ``rename``, category names taken in order from it.

    Idempotent.
    """
    with open(ann_file) as f:
        ann = json.load(f)
    kept = []
    for a in ann['annotations']:
        if isinstance(a['segmentation'], dict):
            a['segmentation'] = _polygons(a['segmentation'])
        if a['segmentation']:
            kept.append(a)
    ann['annotations'] = kept
    if rename:
        for cat, name in zip(ann['categories'], rename):
            cat['name'] = name
    tmp = ann_file + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(ann, f)
    os.replace(tmp, ann_file)


IMAGENET_CLASSES = 1000


def pad_class_folders(train_dir: str) -> None:
    """Empty class folders up to ImageNet-1k's 1000 beside the painted ones
    (named ``n99xxxxxx``: they sort last, the painted classes keep labels
    0-9).

    Datasets that label by sorted folder index (``ImageNetSubset``) check
    that all 1000 are there, as they are in the real data.
    """
    have = [
        d for d in os.listdir(train_dir) if osp.isdir(osp.join(train_dir, d))
    ]
    for i in range(IMAGENET_CLASSES - len(have)):
        os.makedirs(osp.join(train_dir, f'n99{i:06d}'), exist_ok=True)


def _holds(manifest: str, key: str, need: int, **same) -> bool:
    """Whether a painter's manifest says its data hold at least ``need``
    (``key``) with the settings ``same`` (the preflight uses the first
    samples: more are fine)."""
    if not osp.isfile(manifest):
        return False
    with open(manifest) as f:
        meta = json.load(f)
    return meta.get(key, 0) >= need and all(
        meta.get(k) == v for k, v in same.items())


def make_miniature(folders: Set[str],
                   out: str,
                   num_train: int,
                   fashion_mnist: str = FASHION_MNIST) -> str:
    """Write the miniature datasets that provide ``folders`` under
    ``out/data``; returns that folder. Painters skip what is already
    there with the same settings.

    Args:
        folders (set[str]): Folder names under ``data/`` (see
            :func:`data_folders`).
        out (str): Where ``data/`` goes.
        num_train (int): Training images needed (per split; at least this
            many are written).
        fashion_mnist (str): The un-gzipped Fashion-MNIST files the
            painters draw from.

    Raises:
        ValueError: A folder no painter provides (named, with the known
            ones).
    """
    unknown = sorted(f for f in folders if f not in PROVIDERS)
    if unknown:
        raise ValueError(
            f'no miniature data for data/{unknown[0]} (known: '
            f'{sorted(PROVIDERS)}); pass --data-root DIR with the real '
            'data laid out as the config expects under data/')
    root = osp.join(out, 'data')
    kinds = {PROVIDERS[f] for f in folders}
    per_class = math.ceil(num_train / 10)
    if 'imagenet' in kinds and not _holds(
            osp.join(root, 'smoke_manifest.json'),
            'train_per_class',
            per_class,
            img_size=IMAGENET_SIZE):
        from ..smoke.imagenet import make_smoke_imagenet
        make_smoke_imagenet(
            fashion_mnist,
            root,
            img_size=IMAGENET_SIZE,
            train_per_class=per_class)
    if 'imagenet' in kinds:
        pad_class_folders(osp.join(root, 'imagenet', 'train'))
    if 'coco_lvis' in kinds and not _holds(
            osp.join(root, 'smoke_meta.json'),
            'num_train',
            max(2, num_train),
            img_size=COCO_SIZE):
        from mmdet.datasets import CocoDataset

        from ..smoke.coco_lvis import make_datasets
        num = max(2, num_train)  # LVIS's rare classes need two images
        make_datasets(
            fashion_mnist, root, num_train=num, num_val=2, img_size=COCO_SIZE)
        names = list(CocoDataset.METAINFO['classes'])
        for split in ('train', 'val'):
            to_polygons(
                osp.join(root, 'coco', 'annotations',
                         f'instances_{split}2017.json'), names)
            to_polygons(
                osp.join(root, 'lvis_v1', 'annotations',
                         f'lvis_v1_{split}.json'))
    if 'ade20k' in kinds:
        from ..smoke.ade20k import make_smoke_ade20k
        make_smoke_ade20k(
            fashion_mnist, root, num_train=max(2, num_train), num_val=1)
    return root
