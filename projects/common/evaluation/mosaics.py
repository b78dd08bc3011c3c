"""A dense task from a classification set: mosaics of its images, every
pixel and patch labelled with the class of the item under it.

The miniature of a segmentation benchmark on Fashion-MNIST: a 2 x 2 mosaic
of four items, each resized to 16 x 16, fills a 32 x 32 canvas (the
demo's input size). A pixel belongs to its item when the resized item is
at least ``threshold`` bright there (Fashion-MNIST's backgrounds are 0);
darker pixels are *background*, class ``num_classes``. A patch takes the
label most of its pixels have, ties going to the item (patches of 4 on
cells of 16 never straddle two items).
"""
from typing import Tuple

import numpy as np
import torch
import torch.nn.functional as F


def make_mosaics(images: np.ndarray,
                 labels: np.ndarray,
                 count: int,
                 seed: int = 0,
                 grid: int = 2,
                 cell: int = 16,
                 threshold: int = 32,
                 num_classes: int = 10) -> Tuple[np.ndarray, np.ndarray]:
    """``count`` mosaics of ``grid x grid`` items, each image used once.

    Args:
        images (np.ndarray): (N, H, W) uint8 grey images.
        labels (np.ndarray): (N,) class indices in ``[0, num_classes)``.
        count (int): Mosaics to make; needs ``count * grid**2 <= N``.
        seed (int): Which images go where.
        grid (int): Items per side.
        cell (int): Side of each item after resizing (bilinear,
            antialiased).
        threshold (int): Least brightness (0-255) of an item pixel.
        num_classes (int): Classes of ``labels``; the background is
            class ``num_classes``.

    Returns:
        tuple: mosaics (count, grid*cell, grid*cell) uint8 and pixel
        labels of the same shape (int64).
    """
    images, labels = np.asarray(images), np.asarray(labels)
    need = count * grid * grid
    if images.ndim != 3 or len(images) != len(labels):
        raise ValueError(f'make_mosaics: images (N, H, W) and labels (N,) '
                         f'expected, got {images.shape} and {labels.shape}')
    if need > len(images):
        raise ValueError(f'make_mosaics: {count} mosaics of {grid}x{grid} '
                         f'need {need} images, {len(images)} given')
    if labels.min() < 0 or labels.max() >= num_classes:
        raise ValueError(f'make_mosaics: labels outside [0, {num_classes})')
    order = np.random.default_rng(seed).permutation(len(images))[:need]
    items = torch.from_numpy(images[order]).float()[:, None]
    items = F.interpolate(
        items, size=(cell, cell), mode='bilinear', antialias=True)
    items = items.round().clamp(0, 255)[:, 0].reshape(count, grid, grid, cell,
                                                      cell)
    item_labels = torch.from_numpy(labels[order]).reshape(count, grid, grid)
    pixel_labels = torch.where(items >= threshold, item_labels[..., None,
                                                               None],
                               torch.tensor(num_classes))
    side = grid * cell
    # (count, row, col, y, x) -> (count, row*cell + y, col*cell + x)
    mosaics = items.permute(0, 1, 3, 2, 4).reshape(count, side, side)
    pixel_labels = pixel_labels.permute(0, 1, 3, 2,
                                        4).reshape(count, side, side)
    return mosaics.to(torch.uint8).numpy(), pixel_labels.numpy()


def patch_labels(pixel_labels: np.ndarray, grid_hw: Tuple[int, int],
                 num_labels: int) -> np.ndarray:
    """The label most pixels of each patch have (ties: the lowest label,
    i.e. an item before the background).

    Args:
        pixel_labels (np.ndarray): (N, H, W) labels in ``[0, num_labels)``.
        grid_hw (tuple): Patches per column and row; must divide H and W.
        num_labels (int): Classes including the background.

    Returns:
        np.ndarray: (N, h, w) int64.
    """
    n, H, W = pixel_labels.shape
    h, w = grid_hw
    if H % h or W % w:
        raise ValueError(f'patch_labels: a {h}x{w} grid does not divide '
                         f'{H}x{W} pixels')
    x = torch.from_numpy(np.asarray(pixel_labels)).long()
    x = x.reshape(n, h, H // h, w, W // w).permute(0, 1, 3, 2, 4)
    counts = F.one_hot(x.reshape(n, h, w, -1), num_labels).sum(3)
    return counts.argmax(-1).numpy()
