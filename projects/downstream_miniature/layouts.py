"""The miniature downstream datasets in the layouts of COCO 2017, LVIS v1 and
ADE20k, painted from real Fashion-MNIST items (:mod:`.scenes`).

Written under ``out`` (``make_miniature_datasets``)::

    coco/{train,val}2017/*.jpg
    coco/annotations/instances_{train,val}2017.json
    coco/annotations/instances_train2017_{fit,holdout}.json
    lvis_v1/{train,val}2017/*.jpg
    lvis_v1/annotations/lvis_v1_{train,val}.json
    lvis_v1/annotations/lvis_v1_train_{fit,holdout}.json
    ade/ADEChallengeData2016/{images,annotations}/{training,validation}/*
    ade/ADEChallengeData2016/{fit,holdout}.txt
    miniature_meta.json

Training scenes come from Fashion-MNIST's training items only, validation
scenes from its test items only (backgrounds included); every image records
``fmnist_split`` and ``background_fmnist_indices``, every instance its
``fmnist_index``. COCO and ADE20k share their scenes (classes uniform); the
LVIS validation images are COCO's, and LVIS's training scenes have a long
tail (``LVIS_TAIL_IMAGES``), with each category's ``frequency`` set by
LVIS's rule from its number of training images: rare 1-10, common 11-100,
frequent above. ADE20k's PNGs hold 0 on the background (ignored under mmseg's
``reduce_zero_label``) and the ADE20k id of ``FASHION_TO_ADE`` on each class.
The last ``holdout_fraction`` of the training images form ``*_holdout`` and
the rest ``*_fit``: schedules are chosen by fitting on one and evaluating on
the other, never on the validation split.
"""
import json
import os
import os.path as osp
import shutil
from typing import Dict, List

import cv2
import numpy as np

from mmsiameseim.testing.ade20k import FASHION_TO_ADE
from mmsiameseim.testing.coco_lvis import CLASSES, mask_annotation
from mmsiameseim.testing.fashion_mnist_arrays import load_fashion_mnist_arrays
from projects.downstream_miniature.scenes import (long_tail_plans, paint_scene,
                                                  uniform_plan)

FMNIST_SPLIT = dict(train='train', val='test')
# Class -> number of LVIS training images it is on (the others are drawn
# on every image): two rare and two common classes.
LVIS_TAIL_IMAGES = {
    CLASSES.index('bag'): 4,
    CLASSES.index('ankle_boot'): 9,
    CLASSES.index('shirt'): 30,
    CLASSES.index('sneaker'): 75
}
# Second entries of the seeds: an image's is [seed, stream, index], the
# class plans' [seed, PLANS + stream].
STREAMS = dict(train=0, val=1, lvis_train=2)
PLANS = 10
META = 'miniature_meta.json'


def lvis_frequency(image_count: int) -> str:
    """LVIS's group of a category from its number of training images."""
    return 'r' if image_count <= 10 else 'c' if image_count <= 100 else 'f'


def paint_split(fmnist, plans: List[List[int]], size: int, seed: int,
                stream: int) -> list:
    images, labels = fmnist
    by_class = [np.flatnonzero(labels == c) for c in range(len(CLASSES))]
    return [
        paint_scene(
            np.random.default_rng([seed, stream, i]), images, by_class, plan,
            size) for i, plan in enumerate(plans)
    ]


def coco_records(scenes, split: str, first_id: int):
    """(images, annotations) of COCO's instances file for ``scenes``."""
    images, anns = [], []
    for i, scene in enumerate(scenes):
        img_id = first_id + i
        h, w = scene.owner.shape
        images.append(
            dict(
                id=img_id,
                file_name=f'{img_id:012d}.jpg',
                height=h,
                width=w,
                fmnist_split=FMNIST_SPLIT[split],
                background_fmnist_indices=scene.background_sources))
        for label, source, mask in zip(scene.labels, scene.sources,
                                       scene.masks()):
            anns.append(
                dict(
                    id=first_id + len(anns),
                    image_id=img_id,
                    category_id=label + 1,
                    iscrowd=0,
                    fmnist_index=source,
                    **mask_annotation(mask)))
    return images, anns


def write_images(scenes, records, folder: str):
    os.makedirs(folder, exist_ok=True)
    for scene, record in zip(scenes, records):
        cv2.imwrite(
            osp.join(folder, record['file_name']), scene.image,
            [cv2.IMWRITE_JPEG_QUALITY, 95])


def dump(obj, path: str):
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(obj, f)


def split_files(images, anns, categories, path_of, holdout: int):
    """Write the whole split and its ``fit`` / ``holdout`` parts."""
    dump(
        dict(images=images, annotations=anns, categories=categories),
        path_of(''))
    cut = len(images) - holdout
    for part, part_images in (('_fit', images[:cut]), ('_holdout',
                                                       images[cut:])):
        ids = {im['id'] for im in part_images}
        dump(
            dict(
                images=part_images,
                annotations=[a for a in anns if a['image_id'] in ids],
                categories=categories), path_of(part))


def lvis_images(images, anns, split: str) -> list:
    """COCO image records as LVIS's: ``coco_url`` and the exact negatives."""
    present: Dict[int, set] = {im['id']: set() for im in images}
    for a in anns:
        present[a['image_id']].add(a['category_id'])
    out = []
    for im in images:
        im = dict(im)
        im['coco_url'] = ('http://images.cocodataset.org/'
                          f'{split}2017/{im.pop("file_name")}')
        im['neg_category_ids'] = sorted(
            set(range(1,
                      len(CLASSES) + 1)) - present[im['id']])
        im['not_exhaustive_category_ids'] = []
        out.append(im)
    return out


def lvis_categories(train_anns) -> list:
    categories = []
    for i, name in enumerate(CLASSES):
        cat = [a for a in train_anns if a['category_id'] == i + 1]
        count = len({a['image_id'] for a in cat})
        categories.append(
            dict(
                id=i + 1,
                name=name,
                synset=f'{name}.n.01',
                synonyms=[name],
                frequency=lvis_frequency(count),
                image_count=count,
                instance_count=len(cat)))
        categories[-1]['def'] = f'Fashion-MNIST class {name}'
    return categories


def write_ade(root: str, scenes, ade_split: str, prefix: str) -> list:
    names = []
    for i, scene in enumerate(scenes):
        name = f'{prefix}_{i:06d}'
        for kind, ext, array in (('images', '.jpg', scene.image),
                                 ('annotations', '.png',
                                  scene.semantic_map(FASHION_TO_ADE))):
            folder = osp.join(root, kind, ade_split)
            os.makedirs(folder, exist_ok=True)
            cv2.imwrite(osp.join(folder, name + ext), array)
        names.append(name)
    return names


def count(scenes) -> dict:
    return dict(
        images=len(scenes),
        instances=sum(len(s.labels) for s in scenes),
        hidden_dropped=sum(len(s.hidden) for s in scenes))


def write_all(out: str, fmnist: dict, settings: dict) -> dict:
    """Paint and write the three layouts; returns what was written."""
    seed, size = settings['seed'], settings['img_size']
    num = dict(train=settings['num_train'], val=settings['num_val'])
    holdout = int(round(num['train'] * settings['holdout_fraction']))
    counts = {}
    categories = [
        dict(id=i + 1, name=n, supercategory='fashion')
        for i, n in enumerate(CLASSES)
    ]
    ade_root = osp.join(out, 'ade', 'ADEChallengeData2016')
    for split, first_id in (('train', 1), ('val', 100001)):
        rng = np.random.default_rng([seed, PLANS + STREAMS[split]])
        plans = [uniform_plan(rng, len(CLASSES)) for _ in range(num[split])]
        scenes = paint_split(fmnist[split], plans, size, seed, STREAMS[split])
        images, anns = coco_records(scenes, split, first_id)
        if split == 'val':  # LVIS's validation images are COCO's
            coco_val = (scenes, images, anns)
        write_images(scenes, images, osp.join(out, 'coco', f'{split}2017'))
        path = osp.join(out, 'coco', 'annotations',
                        f'instances_{split}2017{{}}.json')
        split_files(images, anns, categories, path.format,
                    holdout if split == 'train' else 0)
        names = write_ade(ade_root, scenes,
                          dict(train='training', val='validation')[split],
                          f'miniature_{split}')
        if split == 'train':
            for part, part_names in (('fit', names[:len(names) - holdout]),
                                     ('holdout',
                                      names[len(names) - holdout:])):
                with open(osp.join(ade_root, f'{part}.txt'), 'w') as f:
                    f.write('\n'.join(part_names) + '\n')
        counts[f'coco_ade_{split}'] = count(scenes)

    rng = np.random.default_rng([seed, PLANS + STREAMS['lvis_train']])
    plans = long_tail_plans(rng, num['train'], len(CLASSES), LVIS_TAIL_IMAGES)
    scenes = paint_split(fmnist['train'], plans, size, seed,
                         STREAMS['lvis_train'])
    images, anns = coco_records(scenes, 'train', 1)
    write_images(scenes, images, osp.join(out, 'lvis_v1', 'train2017'))
    lvis_cats = lvis_categories(anns)
    groups = {
        g: [c['name'] for c in lvis_cats if c['frequency'] == g]
        for g in 'rcf'
    }
    if not all(groups.values()):
        raise ValueError(
            f'--num-train {num["train"]} gives LVIS groups {groups}: each of '
            'rare, common and frequent needs a class (use >= 300 images)')
    path = osp.join(out, 'lvis_v1', 'annotations', 'lvis_v1_train{}.json')
    split_files(
        lvis_images(images, anns, 'train'), anns, lvis_cats, path.format,
        holdout)
    counts['lvis_train'] = count(scenes)
    scenes, images, anns = coco_val
    write_images(scenes, images, osp.join(out, 'lvis_v1', 'val2017'))
    dump(
        dict(
            images=lvis_images(images, anns, 'val'),
            annotations=anns,
            categories=lvis_cats),
        osp.join(out, 'lvis_v1', 'annotations', 'lvis_v1_val.json'))
    return dict(counts=counts, lvis_groups=groups, holdout_images=holdout)


def make_miniature_datasets(fashion_mnist: str,
                            out: str,
                            num_train: int = 3000,
                            num_val: int = 500,
                            img_size: int = 128,
                            holdout_fraction: float = 0.1,
                            seed: int = 0) -> dict:
    """Write the three datasets under ``out``, or reuse the same ones.

    The folder is built as ``out + '.partial'`` and renamed when complete;
    ``out/miniature_meta.json`` holds the settings and what was written.

    Args:
        fashion_mnist (str): Folder of the un-gzipped Fashion-MNIST files.
        out (str): The datasets' folder.
        num_train (int): Training images (each layout). Defaults to 3000.
        num_val (int): Validation images. Defaults to 500.
        img_size (int): Canvas side, at least 64. Defaults to 128.
        holdout_fraction (float): Part of the training images held out
            to choose a schedule on. Defaults to 0.1.
        seed (int): Seed of every random choice. Defaults to 0.

    Returns:
        dict: The contents of ``miniature_meta.json``.

    Raises:
        FileExistsError: ``out`` holds other settings, or no
            ``miniature_meta.json`` (a partial or foreign folder), or
            ``out.partial`` exists (an interrupted or concurrent build).
        FileNotFoundError: The Fashion-MNIST files are missing.
        ValueError: A setting out of range.
    """
    settings = dict(
        num_train=num_train,
        num_val=num_val,
        img_size=img_size,
        holdout_fraction=holdout_fraction,
        seed=seed,
        classes=list(CLASSES),
        lvis_tail_images={
            CLASSES[c]: n
            for c, n in LVIS_TAIL_IMAGES.items()
        })
    if img_size < 64:
        raise ValueError(f'img_size must be >= 64, got {img_size}')
    if not 0 < holdout_fraction < 1 or num_val < 1:
        raise ValueError('holdout_fraction must be in (0, 1) and num_val '
                         f'>= 1, got {holdout_fraction} and {num_val}')
    meta_path = osp.join(out, META)
    if osp.isfile(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta['settings'] == settings:
            return meta
        differ = sorted(k for k in settings
                        if meta['settings'].get(k) != settings[k])
        raise FileExistsError(
            f'{out} holds miniature datasets built with other settings '
            f'({", ".join(differ)} differ, see {meta_path}); pass another '
            'output folder or remove it')
    if osp.exists(out):
        raise FileExistsError(
            f'{out} exists without {META}: a partial or foreign folder; '
            'remove it or pass another output folder')
    partial = out.rstrip('/') + '.partial'
    if osp.exists(partial):
        raise FileExistsError(
            f'{partial} exists: an interrupted (or running) build; remove it '
            'once no build is running')
    fmnist = {
        s: load_fashion_mnist_arrays(fashion_mnist, f)
        for s, f in FMNIST_SPLIT.items()
    }
    os.makedirs(partial)
    try:
        meta = dict(settings=settings, **write_all(partial, fmnist, settings))
        dump(meta, osp.join(partial, META))
    except BaseException:
        shutil.rmtree(partial)
        raise
    os.rename(partial, out)
    return meta
