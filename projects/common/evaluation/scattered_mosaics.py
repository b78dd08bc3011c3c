"""A harder dense task from a classification set: items at their native
size, scattered at random positions and scales on a larger canvas.

Unlike :mod:`.mosaics` (four items at half size in fixed quadrants, so that
4-pixel patches never straddle two items), here every item keeps its native
28 x 28 size times a random scale (antialiased bilinear), lands anywhere on
the canvas and may overlap the items placed before it: patches straddle
items, items and background, and a token must tell the class of whatever
lies under it from context.

Labels are per pixel: a pixel belongs to an item where the scaled item is
at least ``threshold`` bright (Fashion-MNIST's backgrounds are 0); elsewhere
the item leaves the canvas as it was. Items are painted in order, so a
later item's bright pixels occlude (replace, value and label) the earlier
ones': the label is the visible item. Pixels no item covers are
*background*, class ``num_classes``.
"""
from typing import Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F


def scaled_item(image: np.ndarray, scale: float) -> np.ndarray:
    """``image`` (H, W) uint8 resized by ``scale`` (antialiased bilinear,
    rounded), as uint8; scale 1 returns it unchanged."""
    h, w = image.shape
    size = (max(1, round(h * scale)), max(1, round(w * scale)))
    if size == (h, w):
        return image.copy()
    x = torch.from_numpy(image).float()[None, None]
    x = F.interpolate(x, size=size, mode='bilinear', antialias=True)
    return x.round().clamp(0, 255)[0, 0].to(torch.uint8).numpy()


def make_scattered_mosaics(
        images: np.ndarray,
        labels: np.ndarray,
        count: int,
        seed: int = 0,
        canvas: int = 64,
        items: int = 4,
        scale: Sequence[float] = (0.75, 1.5),
        threshold: int = 32,
        num_classes: int = 10) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` canvases of ``items`` scattered items, each image used
    once; deterministic given ``seed``.

    For each item: a scale uniform in ``scale``, then a position uniform
    among those that keep the scaled item inside the canvas.

    Args:
        images (np.ndarray): (N, H, W) uint8 grey images.
        labels (np.ndarray): (N,) class indices in ``[0, num_classes)``.
        count (int): Mosaics to make; needs ``count * items <= N``.
        seed (int): Which images, scales and positions.
        canvas (int): Side of the canvas, in pixels.
        items (int): Items per mosaic, painted in order (later ones on top).
        scale (tuple): Least and largest scale of an item.
        threshold (int): Least brightness (0-255) of an item pixel.
        num_classes (int): Classes of ``labels``; the background is
            class ``num_classes``.

    Returns:
        tuple: mosaics (count, canvas, canvas) uint8, pixel labels of the
        same shape (int64) and sources (count, items): the index in
        ``images`` of each item, in painting order.
    """
    images, labels = np.asarray(images), np.asarray(labels)
    need = count * items
    if images.ndim != 3 or len(images) != len(labels):
        raise ValueError('make_scattered_mosaics: images (N, H, W) and labels '
                         f'(N,) expected, got {images.shape} and '
                         f'{labels.shape}')
    if need > len(images):
        raise ValueError(f'make_scattered_mosaics: {count} mosaics of {items} '
                         f'items need {need} images, {len(images)} given')
    if len(labels) and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError('make_scattered_mosaics: labels outside '
                         f'[0, {num_classes})')
    low, high = scale
    largest = max(round(images.shape[1] * high), round(images.shape[2] * high))
    if not 0 < low <= high or largest > canvas:
        raise ValueError(f'make_scattered_mosaics: scale={tuple(scale)} '
                         f'must be 0 < low <= high with items of at most '
                         f'{largest} px fitting the {canvas} px canvas')
    rng = np.random.default_rng(seed)
    sources = rng.permutation(len(images))[:need].reshape(count, items)
    mosaics = np.zeros((count, canvas, canvas), np.uint8)
    pixels = np.full((count, canvas, canvas), num_classes, np.int64)
    for n in range(count):
        for i in sources[n]:
            item = scaled_item(images[i], rng.uniform(low, high))
            h, w = item.shape
            y = rng.integers(0, canvas - h + 1)
            x = rng.integers(0, canvas - w + 1)
            bright = item >= threshold
            mosaics[n, y:y + h, x:x + w][bright] = item[bright]
            pixels[n, y:y + h, x:x + w][bright] = labels[i]
    return mosaics, pixels, sources
