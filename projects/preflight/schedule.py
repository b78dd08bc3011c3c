"""The schedule a config ships with, and its projected duration."""
import math
import os.path as osp
import re
from typing import Optional

# Training-set sizes of the datasets the shipped configs train on (images
# of the official releases), for projecting an epoch when the preflight
# ran on miniature data. With --data-root the real dataset's length is
# used instead.
DATASET_SIZES = {
    'ImageNet': 1281167,  # ImageNet-1k train
    'ImageNetSubset': 12811,  # SimCLR's 1 % list
    'CocoDataset': 117266,  # COCO train2017 with at least one object
    'CheckedCocoDataset': 117266,
    'LVISV1Dataset': 100170,  # LVIS v1 train
    'CheckedLVISV1Dataset': 100170,
    'ADE20KDataset': 20210,  # ADE20k training
    'LocalFashionMNIST': 60000,
}
GPUS_AND_BATCH = re.compile(r'_(\d+)xb(\d+)')


def devices_from_name(config: str) -> Optional[int]:
    """The device count of a name like ``..._16xb256-...`` (16)."""
    match = GPUS_AND_BATCH.search(osp.basename(config))
    return int(match.group(1)) if match else None


def inner_dataset(dataset: dict) -> dict:
    """The dataset inside wrappers (``ClassBalancedDataset`` ...)."""
    while isinstance(dataset.get('dataset'), dict):
        dataset = dataset['dataset']
    return dataset


def shipped_schedule(cfg) -> dict:
    """Per-device batch, device count, epochs or iterations, dataset type
    of a config as shipped (before any preflight override)."""
    loader = cfg.get('train_dataloader') or {}
    train_cfg = cfg.get('train_cfg') or {}
    dataset = inner_dataset(loader.get('dataset') or {})
    by_epoch = 'max_epochs' in train_cfg
    return dict(
        batch_per_device=loader.get('batch_size'),
        devices=devices_from_name(cfg.filename or '') or 1,
        by_epoch=by_epoch,
        max_epochs=train_cfg.get('max_epochs'),
        max_iters=train_cfg.get('max_iters'),
        dataset_type=dataset.get('type'),
        drop_last=bool(loader.get('drop_last', False)))


def project(schedule: dict, images_per_s: Optional[float],
            dataset_size: Optional[int]) -> Optional[dict]:
    """Time per epoch and in total at ``images_per_s`` per device.

    Args:
        schedule (dict): :func:`shipped_schedule`.
        images_per_s (float | None): Training images per second per device.
        dataset_size (int | None): Training images per epoch.

    Returns:
        dict | None: ``iters_per_epoch``, ``epoch_s``, ``total_s``,
        ``total_iters`` and the inputs; None without a rate or a length.
    """
    batch, devices = schedule['batch_per_device'], schedule['devices']
    trains = schedule['by_epoch'] or schedule['max_iters']
    if not images_per_s or not batch or not trains:
        return None  # no rate, or no training schedule (feature configs)
    global_batch = batch * devices
    step_s = batch / images_per_s  # every device steps in parallel
    out = dict(
        images_per_s_per_device=images_per_s,
        devices=devices,
        global_batch=global_batch,
        dataset_size=dataset_size)
    if schedule['by_epoch']:
        if not dataset_size:
            return None
        rounding = math.floor if schedule['drop_last'] else math.ceil
        iters = max(1, rounding(dataset_size / global_batch))
        out.update(
            iters_per_epoch=iters,
            epoch_s=iters * step_s,
            total_iters=iters * schedule['max_epochs'])
    else:
        out.update(total_iters=schedule['max_iters'])
        if dataset_size:
            iters = math.ceil(dataset_size / global_batch)
            out.update(iters_per_epoch=iters, epoch_s=iters * step_s)
    out['total_s'] = out['total_iters'] * step_s
    return out
