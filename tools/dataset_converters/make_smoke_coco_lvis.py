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

Example::

    python tools/dataset_converters/make_smoke_coco_lvis.py \
        --fashion-mnist data/fashion_mnist --out data/smoke_det
"""
import argparse
import json
import os
import os.path as osp
import shlex
import shutil

import cv2
import numpy as np
import pycocotools.mask as mask_util
from mmengine.utils import ProgressBar

from mmsiameseim.datasets.fashion_mnist_arrays import \
    load_fashion_mnist_arrays

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
    rle = mask_util.encode(np.asfortranarray(mask.astype(np.uint8)))
    bbox = [float(v) for v in mask_util.toBbox(rle)]
    rle['counts'] = rle['counts'].decode('ascii')
    return dict(segmentation=rle, area=float(mask_util.area(rle)), bbox=bbox)


def sample_classes(rng, num: int, weights: np.ndarray) -> list:
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
            anns.append(dict(id=len(anns) + first_id, image_id=img_id,
                             category_id=int(label) + 1, iscrowd=0,
                             **mask_annotation(mask)))
        file_name = f'{img_id:012d}.jpg'
        cv2.imwrite(osp.join(img_dir, file_name), img,
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
        images.append(dict(id=img_id, file_name=file_name, height=size,
                           width=size))
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
    plans = [sample_classes(rng, int(rng.integers(1, 4)), weights)
             for _ in range(num_images)]
    if lvis:
        if num_images < len(rare):
            raise ValueError(f'need at least {len(rare)} images per split '
                             f'for the rare classes, got {num_images}')
        for i, label in enumerate(rare):
            plans[i][0] = label
    return plans


def write_coco(out, rng, fmnist, num, size, split):
    img_dir = osp.join(out, 'coco', f'{split}2017')
    os.makedirs(img_dir)
    plans = class_plans(rng, num, lvis=False, train=split == 'train')
    images, anns = make_split(rng, fmnist[split], num, size, img_dir,
                              first_id=1 if split == 'train' else 100001,
                              class_plan=plans)
    categories = [dict(id=i + 1, name=n, supercategory='fashion')
                  for i, n in enumerate(CLASSES)]
    dump(dict(images=images, annotations=anns, categories=categories),
         osp.join(out, 'coco', 'annotations', f'instances_{split}2017.json'))


def write_lvis(out, rng, fmnist, num, size, split, train_counts=None):
    img_dir = osp.join(out, 'lvis_v1', f'{split}2017')
    os.makedirs(img_dir)
    plans = class_plans(rng, num, lvis=True, train=split == 'train')
    images, anns = make_split(rng, fmnist[split], num, size, img_dir,
                              first_id=1 if split == 'train' else 100001,
                              class_plan=plans)
    all_ids = set(range(1, len(CLASSES) + 1))
    for img in images:
        present = {a['category_id'] for a in anns
                   if a['image_id'] == img['id']}
        img['coco_url'] = ('http://images.cocodataset.org/'
                           f'{split}2017/{img.pop("file_name")}')
        img['neg_category_ids'] = sorted(all_ids - present)
        img['not_exhaustive_category_ids'] = []
    counts = train_counts or category_counts(anns)
    categories = []
    for i, name in enumerate(CLASSES):
        freq = 'r' if name in RARE else 'c' if name in COMMON else 'f'
        categories.append({
            'id': i + 1, 'name': name, 'synset': f'{name}.n.01',
            'synonyms': [name], 'def': f'Fashion-MNIST class {name}',
            'frequency': freq, 'image_count': counts[i + 1][0],
            'instance_count': counts[i + 1][1]})
    dump(dict(images=images, annotations=anns, categories=categories),
         osp.join(out, 'lvis_v1', 'annotations', f'lvis_v1_{split}.json'))
    return counts


def category_counts(anns) -> dict:
    """{category_id: (image_count, instance_count)}."""
    counts = {i + 1: (0, 0) for i in range(len(CLASSES))}
    for cat in counts:
        cat_anns = [a for a in anns if a['category_id'] == cat]
        counts[cat] = (len({a['image_id'] for a in cat_anns}), len(cat_anns))
    return counts


def dump(obj, path):
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(obj, f)


def make_datasets(fashion_mnist: str, out: str, num_train: int = 8,
                  num_val: int = 4, img_size: int = 128, seed: int = 0):
    """Write both datasets under ``out`` unless the same ones are there."""
    if img_size < 64:
        raise ValueError(f'--img-size must be >= 64 (two 28-pixel items per '
                         f'side), got {img_size}')
    meta = dict(num_train=num_train, num_val=num_val, img_size=img_size,
                seed=seed, classes=CLASSES, rare=RARE, common=COMMON)
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


def smoke_cfg_options(data_root: str, checkpoint: str, dataset: str,
                      img_size: int = 128) -> dict:
    """``--cfg-options`` that shrink the full benchmark config to the
    Fashion-MNIST demo checkpoint (128-wide, 4 blocks, 4 heads, patch 4,
    learned at 32 x 32; its 1-channel patch embedding is replicated over RGB
    by ViTDetViT) and to one CPU epoch on the data written here."""
    if dataset not in ('coco', 'lvis'):
        raise ValueError(f'dataset must be coco or lvis, got {dataset!r}')
    size = (img_size, img_size)
    root = osp.join(data_root, 'coco' if dataset == 'coco' else 'lvis_v1')
    root = root + '/'
    train = 'train_dataloader.dataset.'
    if dataset == 'lvis':  # inside ClassBalancedDataset
        train += 'dataset.'
    ann = ('annotations/instances_val2017.json' if dataset == 'coco' else
           'annotations/lvis_v1_val.json')
    opts = {
        'model.backbone.arch.embed_dims': 128,
        'model.backbone.arch.num_layers': 4,
        'model.backbone.arch.num_heads': 4,
        'model.backbone.arch.feedforward_channels': 512,
        'model.backbone.img_size': img_size,
        'model.backbone.patch_size': 4,
        'model.backbone.pretrain_img_size': 32,
        'model.backbone.window_size': 4,
        'model.backbone.global_attn_indexes': [1, 3],
        'model.backbone.init_cfg.checkpoint': checkpoint,
        'model.neck.backbone_channel': 128,
        'model.neck.in_channels': [32, 64, 128, 128],
        # heads 64 wide instead of 256, to match the tiny backbone on CPU
        'model.neck.out_channels': 64,
        'model.rpn_head.in_channels': 64,
        'model.rpn_head.feat_channels': 64,
        'model.roi_head.bbox_roi_extractor.out_channels': 64,
        'model.roi_head.bbox_head.in_channels': 64,
        'model.roi_head.bbox_head.conv_out_channels': 64,
        'model.roi_head.bbox_head.fc_out_channels': 256,
        'model.roi_head.mask_roi_extractor.out_channels': 64,
        'model.roi_head.mask_head.in_channels': 64,
        'model.roi_head.mask_head.conv_out_channels': 64,
        'model.roi_head.bbox_head.num_classes': len(CLASSES),
        'model.roi_head.mask_head.num_classes': len(CLASSES),
        'model.data_preprocessor.batch_augments.0.size': size,
        # fewer proposals / sampled RoIs: the 4-conv box head dominates CPU
        # time; an untrained detector scores low, keep its boxes for the metric
        'model.train_cfg.rpn_proposal.max_per_img': 100,
        'model.train_cfg.rcnn.sampler.num': 64,
        'model.test_cfg.rpn.max_per_img': 100,
        'model.test_cfg.rcnn.max_per_img': 20,
        'model.test_cfg.rcnn.score_thr': 0.0,
        'optim_wrapper.type': 'OptimWrapper',  # AMP needs a GPU
        'optim_wrapper.paramwise_cfg.num_layers': 4,
        'train_dataloader.batch_size': 2,
        'train_dataloader.num_workers': 0,
        'train_dataloader.persistent_workers': False,
        train + 'data_root': root,
        train + 'pipeline.2.scale': size,
        train + 'pipeline.3.crop_size': size,
        'val_dataloader.num_workers': 0,
        'val_dataloader.persistent_workers': False,
        'val_dataloader.dataset.data_root': root,
        'val_dataloader.dataset.pipeline.1.scale': size,
        'val_dataloader.dataset.pipeline.2.size': size,
        'val_evaluator.ann_file': root + ann,
        'train_cfg.max_epochs': 1,
        'train_cfg.val_interval': 1,
        'default_hooks.logger.interval': 1,
    }
    if dataset == 'coco':  # CocoDataset selects categories by name
        opts[train + 'metainfo.classes'] = CLASSES
        opts['val_dataloader.dataset.metainfo.classes'] = CLASSES
    return opts


def format_cfg_options(opts: dict) -> str:
    """The options as shell-quoted ``mim train`` (DictAction) arguments."""
    def fmt(v):
        if isinstance(v, (tuple, list)):
            inner = ','.join(str(x) for x in v)
            return f'({inner})' if isinstance(v, tuple) else f'[{inner}]'
        return str(v)
    return ' '.join(shlex.quote(f'{k}={fmt(v)}') for k, v in opts.items())


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--fashion-mnist', default='data/fashion_mnist',
                        help='folder with the un-gzipped Fashion-MNIST files')
    parser.add_argument('--out', default='data/smoke_det')
    parser.add_argument('--num-train', type=int, default=8)
    parser.add_argument('--num-val', type=int, default=4)
    parser.add_argument('--img-size', type=int, default=128)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--checkpoint', default='CHECKPOINT',
                        help='pretraining checkpoint to put in the printed '
                        'smoke-test commands')
    return parser.parse_args()


if __name__ == '__main__':
    args = parse_args()
    make_datasets(args.fashion_mnist, args.out, args.num_train, args.num_val,
                  args.img_size, args.seed)
    for name, dataset in (('coco', 'coco'), ('lvis-v1', 'lvis')):
        opts = smoke_cfg_options(args.out, args.checkpoint, dataset,
                                 args.img_size)
        print(f'\nCPU smoke run on {dataset}:\n'
              'PYTHONPATH=$PWD mim train mmdet '
              'configs/benchmarks/mmdet/mask-rcnn_vitdet-b-siameseim-pre_'
              f'16xb4-lsj-100e_{name}.py --work-dir work_dirs/smoke_{name} '
              f'--cfg-options {format_cfg_options(opts)}')
