"""Scenes of the miniature downstream datasets: real Fashion-MNIST items at
their native size on a canvas, with exact visible masks.

A *class* is a Fashion-MNIST class (10). An *instance* is one Fashion-MNIST
item, scaled by a random factor (``SCALE_RANGE``, from its native 28 px) and
pasted at a random position; its pixels are those above ``MASK_THRESHOLD``
once scaled. Items are pasted in order and may overlap: a later item hides
what it covers, so an instance's mask is its *visible* part, and an instance
left with no visible pixel is dropped (and counted in ``Scene.hidden``). The
*background* is every other pixel: a blurred, tinted mosaic of 16 other items
of the same Fashion-MNIST split (never annotated).

Every random choice of image ``i`` of a stream comes from
``np.random.default_rng([seed, stream, i])``, so a dataset is determined by
its seed and a larger build starts with the images of a smaller one.
"""
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

import cv2
import numpy as np

ITEM_SIDE = 28  # Fashion-MNIST's native size
SCALE_RANGE = (0.75, 1.5)
MASK_THRESHOLD = 40  # pixel value above which a scaled item pixel is drawn
ITEMS_PER_IMAGE = (1, 6)  # inclusive range of pasted items


@dataclass
class Scene:
    """One painted image and its instances.

    Args:
        image (np.ndarray): (H, W, 3) uint8, BGR (the three channels equal
            on items, tinted on the background).
        owner (np.ndarray): (H, W) int16, index of the visible instance in
            ``labels`` per pixel, -1 on the background.
        labels (list[int]): Class of each visible instance.
        sources (list[int]): Fashion-MNIST index (in its split) of each.
        hidden (list[tuple[int, int]]): (class, source) of the items that
            ended fully hidden and were dropped.
        background_sources (list[int]): Fashion-MNIST indices of the
            background mosaic.
    """
    image: np.ndarray
    owner: np.ndarray
    labels: List[int] = field(default_factory=list)
    sources: List[int] = field(default_factory=list)
    hidden: List[Tuple[int, int]] = field(default_factory=list)
    background_sources: List[int] = field(default_factory=list)

    def masks(self) -> List[np.ndarray]:
        """The visible (exact) mask of each instance, bool (H, W)."""
        return [self.owner == k for k in range(len(self.labels))]

    def semantic_map(self, label_ids: Sequence[int]) -> np.ndarray:
        """(H, W) uint8: ``label_ids[class]`` on each instance, 0 on the
        background."""
        lut = np.array([0] + [label_ids[c] for c in self.labels], np.uint8)
        return lut[self.owner + 1]


def paint_background(rng, images: np.ndarray, size: int):
    """Blurred, tinted 4 x 4 mosaic of random items; (BGR image, indices)."""
    idx = rng.integers(0, len(images), 16)
    mosaic = images[idx].reshape(4, 4, 28, 28).transpose(0, 2, 1, 3)
    mosaic = cv2.resize(mosaic.reshape(112, 112), (size, size))
    mosaic = cv2.GaussianBlur(mosaic, (0, 0), size / 32).astype(np.float32)
    tint = rng.uniform(0.3, 0.7, 3)
    image = np.clip(mosaic[..., None] * tint + 20, 0, 255).astype(np.uint8)
    return image, [int(i) for i in idx]


def paint_scene(rng, images: np.ndarray, by_class: Sequence[np.ndarray],
                classes: Sequence[int], size: int) -> Scene:
    """Paste one item of each class of ``classes``, in that order.

    Args:
        rng (np.random.Generator): Source of every random choice.
        images (np.ndarray): The split's items (N, 28, 28) uint8.
        by_class (list[np.ndarray]): Indices into ``images`` per class.
        classes (list[int]): Classes of the items, in paste order.
        size (int): Canvas side in pixels.
    """
    image, background = paint_background(rng, images, size)
    owner = np.full((size, size), -1, np.int16)
    pasted = []
    for k, label in enumerate(classes):
        source = int(rng.choice(by_class[label]))
        side = int(round(ITEM_SIDE * rng.uniform(*SCALE_RANGE)))
        item = cv2.resize(
            images[source], (side, side), interpolation=cv2.INTER_LINEAR)
        top, left = (int(v) for v in rng.integers(0, size - side + 1, 2))
        drawn = item > MASK_THRESHOLD
        image[top:top + side, left:left + side][drawn] = item[drawn][:, None]
        owner[top:top + side, left:left + side][drawn] = k
        pasted.append((int(label), source))
    scene = Scene(image, owner, background_sources=background)
    renumber = np.full(len(pasted) + 1, -1, np.int16)
    for k, (label, source) in enumerate(pasted):
        if (owner == k).any():
            renumber[k + 1] = len(scene.labels)
            scene.labels.append(label)
            scene.sources.append(source)
        else:
            scene.hidden.append((label, source))
    scene.owner = renumber[owner + 1]
    return scene


def uniform_plan(rng, num_classes: int) -> List[int]:
    """Classes of one image: 1-6 items, each class equally likely."""
    count = int(rng.integers(ITEMS_PER_IMAGE[0], ITEMS_PER_IMAGE[1] + 1))
    return [int(c) for c in rng.integers(0, num_classes, count)]


def long_tail_plans(rng, num_images: int, num_classes: int,
                    tail_images: dict) -> List[List[int]]:
    """Classes of each image of a long-tailed split.

    Each image gets 1-6 items of the classes not in ``tail_images``; then
    each tail class is added once to exactly ``tail_images[class]``
    distinct images, at a random place in their paste order.

    Args:
        rng (np.random.Generator): Source of every random choice.
        num_images (int): Images of the split.
        num_classes (int): Classes in all.
        tail_images (dict[int, int]): Class -> number of images it is on.
    """
    head = [c for c in range(num_classes) if c not in tail_images]
    plans = []
    for _ in range(num_images):
        count = int(rng.integers(ITEMS_PER_IMAGE[0], ITEMS_PER_IMAGE[1] + 1))
        plans.append([int(c) for c in rng.choice(head, count)])
    for label, count in sorted(tail_images.items()):
        if count > num_images:
            raise ValueError(f'the long tail puts class {label} on {count} '
                             f'images, but the split has {num_images}')
        for i in rng.choice(num_images, count, replace=False):
            plans[i].insert(int(rng.integers(0, len(plans[i]) + 1)), label)
    return plans
