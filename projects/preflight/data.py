"""Miniature data in the on-disk formats the shipped configs read.

Every dataset path of a shipped benchmark or ImageNet config starts with
``data/`` (``data/imagenet``, ``data/imagenet-c``, ``data/coco``,
``data/lvis_v1``, ``data/ade/ADEChallengeData2016``, ...). A preflight points
that prefix at a folder holding the same layout: the user's real data
(``--data-root DIR``) or a miniature written here by the smoke painters of
:mod:`mmsiameseim.testing` from real Fashion-MNIST pixels:

- ImageNet class folders of JPEGs with ``meta/*.txt``, the 1 % list, and the
  A / R / Sketch / C test-set layouts (:mod:`~mmsiameseim.testing.imagenet`);
- COCO and LVIS v1 JSON with images and **polygon** instance masks (the
  painter writes exact RLE; real COCO / LVIS store objects as polygons, so
  they are converted here), categories renamed to COCO's / LVIS's class
  names and completed to all 80 / 1203 of them, as in the real files;
- ADE20k image and annotation folders (:mod:`~mmsiameseim.testing.ade20k`).

The own-images configs (``*_folder*.py``) ship ``UnlabeledImageFolder``,
``LabelledImageFolder`` or ``SegmentationFolder`` without a ``data_root`` (the
user gives it). Given a folder (``--data-root DIR``, or a ``data_root`` set
with ``--cfg-options``), a preflight reads it, in every own-images loader
whose ``data_root`` is unset, and stops before training when it holds fewer
images than the preflight's iterations x batch. Without one it points the
first at the miniature ImageNet's training JPEGs, read recursively without
labels, the second at the miniature ImageNet, whose ``train`` and ``val``
folders hold one folder per class, and the third at the miniature ADE20k
laid out as images, masks and a class list.

The Fashion-MNIST configs read the real Fashion-MNIST (``LocalFashionMNIST``).
"""
import json
import math
import os
import os.path as osp
import shutil
from typing import Any, Iterable, List, Optional, Set, Tuple

from mmsiameseim.atomic_io import atomic_write
from projects.common.results import REPO
from projects.preflight.schedule import inner_dataset

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
    'segmentation_folder': 'segmentation_folder',
}
IMAGENET_SIZE = 288  # > 256: the test resize and the crops shrink it
COCO_SIZE = 640  # COCO's long side; LSJ rescales it by 0.1-2.0 of 1024

IMAGE_FOLDER = PREFIX + 'imagenet/train'
LABELLED_FOLDER = PREFIX + 'imagenet'
SEGMENTATION_FOLDER = PREFIX + 'segmentation_folder'
MINIATURE_FOLDERS = (IMAGE_FOLDER, LABELLED_FOLDER, SEGMENTATION_FOLDER)

OWN_FOLDER_LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')


def own_folder_datasets(cfg: dict) -> List[Tuple[str, dict]]:
    """(loader key, innermost dataset) of each own-images dataset of a
    config: an ``UnlabeledImageFolder`` training set, a
    ``LabelledImageFolder`` or ``SegmentationFolder`` in any loader."""
    found = []
    for key in OWN_FOLDER_LOADERS:
        loader = cfg.get(key) or {}
        dataset = inner_dataset(loader.get('dataset') or {})
        kind = dataset.get('type')
        if kind in ('LabelledImageFolder', 'SegmentationFolder') or (
                key == 'train_dataloader' and kind == 'UnlabeledImageFolder'):
            found.append((key, dataset))
    return found


def user_folder(cfg: dict) -> Optional[str]:
    """The folder the user gave an own-images dataset (a ``data_root``
    other than the miniature's, e.g. with ``--cfg-options``), or None."""
    for _, dataset in own_folder_datasets(cfg):
        root = dataset.get('data_root')
        if root and root not in MINIATURE_FOLDERS:
            return root
    return None


def fill_image_folder(cfg: dict,
                      folder: Optional[str] = None) -> Optional[str]:
    """Give the own-images datasets without ``data_root`` a folder, in
    place: ``folder`` (the user's: ``--data-root``), else the one the user
    gave another own-images dataset of the config (:func:`user_folder`),
    else one under ``data/`` (re-rooted like any other path): an
    ``UnlabeledImageFolder`` training set :data:`IMAGE_FOLDER`, a
    ``LabelledImageFolder`` (any loader) :data:`LABELLED_FOLDER`, whose
    ``train`` and ``val`` splits hold the same class folders, a
    ``SegmentationFolder`` :data:`SEGMENTATION_FOLDER`.

    The user's folders become absolute paths (a relative one is the
    current folder's, even one that starts with ``data/``).

    Returns the override line, or None.
    """
    for _, dataset in own_folder_datasets(cfg):
        if dataset.get('data_root') and \
                dataset['data_root'] not in MINIATURE_FOLDERS:
            dataset['data_root'] = osp.abspath(dataset['data_root'])
    folder = folder or user_folder(cfg)
    filled = []
    for key, dataset in own_folder_datasets(cfg):
        if dataset.get('data_root'):
            continue
        if folder:
            dataset['data_root'] = folder
            filled.append(f'{key}.dataset.data_root unset -> {folder} (your '
                          'folder)')
        elif dataset.get('type') == 'UnlabeledImageFolder':
            dataset['data_root'] = IMAGE_FOLDER
            filled.append(f'{key}.dataset.data_root unset -> {IMAGE_FOLDER} '
                          '(JPEGs in class folders, read recursively '
                          'without labels)')
        elif dataset.get('type') == 'LabelledImageFolder':
            dataset['data_root'] = LABELLED_FOLDER
            filled.append(f'{key}.dataset.data_root unset -> '
                          f'{LABELLED_FOLDER} (class folders in train/ and '
                          'val/)')
        elif dataset.get('type') == 'SegmentationFolder':
            dataset['data_root'] = SEGMENTATION_FOLDER
            filled.append(f'{key}.dataset.data_root unset -> '
                          f'{SEGMENTATION_FOLDER} (the miniature ADE20k as '
                          'images, masks and classes.txt)')
    return '; '.join(filled) or None


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
    ``rename``, category names taken in order from it, the names beyond the
    painted categories added as categories without objects (as the real
    files list all 80 / 1203, which the configs' class counts check).

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
        cats = ann['categories'][:len(rename)]
        for cat, name in zip(cats, rename):
            cat['name'] = name
        first = max(c['id'] for c in cats) + 1
        extra = {k: v for k, v in cats[0].items() if k not in ('id', 'name')}
        extra.update(
            {k: 0
             for k in ('image_count', 'instance_count') if k in extra})
        ann['categories'] = cats + [
            dict(extra, id=first + i, name=name)
            for i, name in enumerate(rename[len(cats):])
        ]
    atomic_write(ann_file, json.dumps(ann))


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
        from mmsiameseim.testing.imagenet import make_smoke_imagenet
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
        from mmdet.datasets import CocoDataset, LVISV1Dataset

        from mmsiameseim.testing.coco_lvis import make_datasets
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
                         f'lvis_v1_{split}.json'),
                list(LVISV1Dataset.METAINFO['classes']))
    if kinds & {'ade20k', 'segmentation_folder'}:
        from mmsiameseim.testing.ade20k import make_smoke_ade20k
        ade = make_smoke_ade20k(
            fashion_mnist, root, num_train=max(2, num_train), num_val=1)
        if 'segmentation_folder' in kinds:
            ade_as_segmentation_folder(ade,
                                       osp.join(root, 'segmentation_folder'))
    return root


def ade_as_segmentation_folder(ade: str, out: str) -> None:
    """The miniature ADE20k in ``SegmentationFolder``'s layout: its 150
    class names in ``classes.txt``, ``images/`` and ``masks/`` per split,
    the masks' values less one (ADE20k's 0, 'other', becomes 255,
    ignored)."""
    import cv2
    import numpy as np
    from mmseg.datasets import ADE20KDataset
    os.makedirs(out, exist_ok=True)
    with open(osp.join(out, 'classes.txt'), 'w') as f:
        f.write('\n'.join(ADE20KDataset.METAINFO['classes']) + '\n')
    for ade_split, split in (('training', 'train'), ('validation', 'val')):
        img_dir = osp.join(out, 'images', split)
        mask_dir = osp.join(out, 'masks', split)
        for d in (img_dir, mask_dir):
            os.makedirs(d, exist_ok=True)
        src = osp.join(ade, 'images', ade_split)
        for name in sorted(os.listdir(src)):
            stem = osp.splitext(name)[0]
            shutil.copy(osp.join(src, name), osp.join(img_dir, name))
            ann = cv2.imread(
                osp.join(ade, 'annotations', ade_split, stem + '.png'),
                cv2.IMREAD_UNCHANGED)
            mask = np.where(ann == 0, 255, ann.astype(np.int32) - 1)
            cv2.imwrite(
                osp.join(mask_dir, stem + '.png'), mask.astype(np.uint8))


def count_folder_images(dataset: dict) -> int:
    """How many images an own-images dataset finds in its folder: the
    dataset itself, built without its pipeline or ``indices`` (its errors
    name a missing or empty folder)."""
    import mmsiameseim  # noqa: F401  (registers the datasets)
    dataset = dict(dataset, pipeline=[], indices=None, serialize_data=False)
    if dataset['type'] == 'SegmentationFolder':
        from mmseg.registry import DATASETS

        import mmsiameseim.seg  # noqa: F401
        dataset['verify_masks'] = False  # counting only
    else:
        from mmpretrain.registry import DATASETS
        if dataset['type'] == 'UnlabeledImageFolder':
            dataset['verify'] = False
    return len(DATASETS.build(dataset))


def check_user_folder(cfg: dict, iters: int, batch: int) -> str:
    """Count the images of each own-images dataset that reads the user's
    folder; returns what the report says of the data.

    Raises:
        ValueError: The training folder holds fewer images than ``iters``
            x ``batch`` (the message names it, how many it holds and how
            many are needed).
    """
    counts = []
    for key, dataset in own_folder_datasets(cfg):
        root = dataset['data_root']
        where = root if dataset['type'] == 'UnlabeledImageFolder' else \
            f'{root}, split {dataset.get("split", "train")!r}'
        images = count_folder_images(dataset)
        need = iters * batch if key == 'train_dataloader' else 1
        if images < need:
            fits = f'--iters {images // batch}' if images >= batch else \
                f'--batch-size {images} --iters 1'
            raise ValueError(
                f'{key}.dataset.data_root={root}: the folder ({where}) holds '
                f'{images} image(s); the preflight needs {need} '
                f'({iters} iterations x batch {batch} per process). Add '
                f'images, or run fewer: {fits}')
        counts.append(f'{key}: {images} images in {where}')
    return 'your folder (' + '; '.join(counts) + ')'
