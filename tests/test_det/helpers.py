"""Shared pieces of the mmdet-side tests."""
import os

import torch

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO_PRETRAIN_CFG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def tiny_vit(**overrides):
    """A ViTDetViT: 32 wide, 4 blocks, patch 4, windows of 4, global 1, 3."""
    import mmsiameseim.det  # noqa: F401
    from mmsiameseim.det.backbones import ViTDetViT
    cfg = dict(
        arch=dict(
            embed_dims=32, num_layers=4, num_heads=4, feedforward_channels=64),
        img_size=64,
        patch_size=4,
        pretrain_img_size=32,
        window_size=4,
        global_attn_indexes=(1, 3),
        drop_path_rate=0.)
    cfg.update(overrides)
    return ViTDetViT(**cfg)


def save_demo_pretrain_checkpoint(path):
    """Save a freshly built SiameseIM of the Fashion-MNIST demo config
    (128 wide, 4 blocks, patch 4, 32 x 32, 1 channel) the way mmengine's
    Runner does: {'meta': ..., 'state_dict': ...}."""
    from mmengine.config import Config
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    cfg = Config.fromfile(DEMO_PRETRAIN_CFG)
    model = MODELS.build(dict(cfg.model, _scope_='mmpretrain'))
    torch.save({'meta': {'epoch': 1}, 'state_dict': model.state_dict()}, path)
    return model


# Shapes (height, width) of the own-data photos: landscape and portrait.
PHOTO_SHAPES = ((96, 128), (128, 80), (72, 112), (120, 96))
OWN_CLASSES = ('cat', 'dog')


def _disc(cx, cy, r, points=16):
    import math
    return [
        round(v, 2) for k in range(points)
        for v in (cx + r * math.cos(2 * math.pi * k / points),
                  cy + r * math.sin(2 * math.pi * k / points))
    ]


def make_own_coco(root, num_train=4, num_val=2, seed=0):
    """Your own COCO-format data on non-square photographs: crops of the
    sample photos (landscape and portrait, 72-128 px) with a painted disc
    ('cat') and square ('dog') each, polygon masks, in COCO 2017's layout
    (``annotations/instances_{train,val}2017.json``, ``{train,val}2017/``).
    Returns the annotation dicts, {split: json}."""
    import json

    import cv2
    import numpy as np

    from tests.helpers import photo_crops
    rng = np.random.default_rng(seed)
    out, ann_id = {}, 1
    for split, count in (('train', num_train), ('val', num_val)):
        folder = os.path.join(root, f'{split}2017')
        os.makedirs(folder, exist_ok=True)
        images, anns = [], []
        for i in range(count):
            h, w = PHOTO_SHAPES[i % len(PHOTO_SHAPES)]
            img = next(photo_crops(1, h, seed + 7 * i + len(split),
                                   w))[..., ::-1]
            img = np.ascontiguousarray(img)
            img_id = len(images) + 1
            r = int(rng.integers(8, min(h, w) // 4))
            cx, cy = int(rng.integers(r, w // 2 - 2)), int(
                rng.integers(r, h - r))
            disc = _disc(cx, cy, r)
            s = int(rng.integers(10, min(h, w) // 3))
            x, y = int(rng.integers(w // 2,
                                    w - s)), int(rng.integers(0, h - s))
            square = [x, y, x + s, y, x + s, y + s, x, y + s]
            for poly, colour in ((disc, (40, 220, 250)), (square, (120, 30,
                                                                   20))):
                cv2.fillPoly(img,
                             [np.array(poly).reshape(-1, 2).astype(np.int32)],
                             colour)
            name = f'{split}_{i:03d}.jpg'
            cv2.imwrite(os.path.join(folder, name), img)
            images.append(dict(id=img_id, file_name=name, height=h, width=w))
            for cat, poly in ((1, disc), (2, square)):
                xs, ys = poly[0::2], poly[1::2]
                box = [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]
                anns.append(
                    dict(
                        id=ann_id,
                        image_id=img_id,
                        category_id=cat,
                        bbox=box,
                        area=float(box[2] * box[3]),
                        iscrowd=0,
                        segmentation=[poly]))
                ann_id += 1
        data = dict(
            images=images,
            annotations=anns,
            categories=[
                dict(id=i + 1, name=n) for i, n in enumerate(OWN_CLASSES)
            ])
        os.makedirs(os.path.join(root, 'annotations'), exist_ok=True)
        with open(
                os.path.join(root, 'annotations',
                             f'instances_{split}2017.json'), 'w') as f:
            json.dump(data, f)
        out[split] = data
    return out


def build_detector(config):
    """(config, detector) of a detection config file, its backbone loading
    no checkpoint."""
    from mmdet.registry import MODELS
    from mmdet.utils import register_all_modules
    from mmengine.config import Config

    import mmsiameseim.det  # noqa: F401
    register_all_modules()
    cfg = Config.fromfile(config)
    cfg.model.backbone.init_cfg = None
    return cfg, MODELS.build(cfg.model)


def finetune_before_after(config, root, work_dir, iters, schedule):
    """Run a downstream ``config`` as `mim train` does (its runner_type,
    from ``root``, the folder its relative paths start from) for ``iters``
    iterations, validating the model as loaded before its first step and
    again at the end; returns the two metric dicts.

    ``schedule(cfg,
    iters)`` scales the config's schedule to ``iters``.
    """
    from mmengine.config import Config
    from mmengine.hooks import Hook
    from mmengine.registry import RUNNERS

    class RecordVal(Hook):

        def __init__(self):
            self.metrics = []

        def before_train(self, runner):
            runner.val_loop.run()

        def after_val_epoch(self, runner, metrics=None):
            self.metrics.append(dict(metrics))

    cfg = Config.fromfile(config)
    cfg.work_dir = str(work_dir)
    cfg.train_cfg.max_iters = cfg.train_cfg.val_interval = iters
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=-1)
    schedule(cfg, iters)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        runner = RUNNERS.build(cfg)  # as mmdet's / mmseg's tools/train.py
        record = RecordVal()
        runner.register_hook(record, 'LOW')
        runner.train()
    finally:
        os.chdir(cwd)
    assert type(runner).__name__ == 'FaultTolerantRunner'
    assert runner.iter == iters and len(record.metrics) == 2
    return record.metrics
