"""Synthetic training batches of the benchmark models."""
import numpy as np
import torch


def synthetic_geometry(batch: int,
                       grid: int,
                       mask_ratio: float = 0.6,
                       source: int = 256) -> dict:
    """Masks (B, grid, grid; ``mask_ratio`` masked, the same count in every
    sample), crop boxes (B, 2, 4), flips (B, 2) and source widths (B,) of
    a two-view batch (seed 0)."""
    rng = np.random.default_rng(0)
    n_mask = int(round(mask_ratio * grid * grid))
    masks = np.zeros((batch, grid * grid), bool)
    for mask in masks:
        mask[rng.permutation(grid * grid)[:n_mask]] = True
    boxes = np.tile(
        np.array([[10, 20, 200, 180], [40, 5, 150, 220]], np.float32),
        (batch, 1, 1))
    flips = rng.random((batch, 2)) < 0.5
    return dict(
        masks=masks.reshape(batch, grid, grid),
        boxes=boxes,
        flips=flips,
        widths=np.full(batch, float(source)),
        source=source)


def siameseim_batch(batch: int,
                    img_size: int,
                    patch_size: int = 16,
                    device: str = 'cpu',
                    target_size: int = None) -> dict:
    """``model(**batch, mode='loss')`` inputs of SiameseIM: two views and
    DataSamples with mask, crop boxes, flips and source size."""
    from mmpretrain.structures import DataSample
    geo = synthetic_geometry(batch, img_size // patch_size)
    samples = []
    for i in range(batch):
        ds = DataSample()
        ds.set_mask(torch.from_numpy(geo['masks'][i]))
        ds.set_field(geo['boxes'][i], 'crop_boxes')
        ds.set_field(geo['flips'][i], 'flips')
        ds.set_field((geo['source'], int(geo['widths'][i])),
                     'crop_source_shape')
        samples.append(ds)
    views = [
        torch.randn(batch, 3, size, size, device=device)
        for size in (img_size, target_size or img_size)
    ]
    return dict(inputs=views, data_samples=samples)


def mae_batch(batch: int, img_size: int, device: str = 'cpu') -> dict:
    """``model(**batch, mode='loss')`` inputs of MAE."""
    from mmpretrain.structures import DataSample
    return dict(
        inputs=torch.randn(batch, 3, img_size, img_size, device=device),
        data_samples=[DataSample() for _ in range(batch)])
