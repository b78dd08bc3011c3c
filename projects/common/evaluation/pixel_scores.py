"""Per-pixel segmentation scores: mIoU, accuracy and boundary IoU.

Boundary IoU (Cheng et al., "Boundary IoU: Improving Object-Centric Image
Segmentation Evaluation", CVPR 2021) is the IoU restricted to the pixels of
each mask that lie within ``d`` pixels of its contour: G_d = G minus G
eroded by d, P_d likewise, and the IoU of G_d and P_d. As in the
authors' code, the erosion is d steps of a 3 x 3 square (a Chebyshev
distance) and pixels outside the image count as not in the mask, so the
image border is a contour too. For a semantic map, each class's mask is
scored this way, intersections and unions summed over the images, and the
mean taken over the classes, like the mIoU.
"""
from typing import Dict

import numpy as np
import torch
import torch.nn.functional as F

from projects.common.evaluation.dense_probe import segmentation_scores


def inner_boundary(masks: torch.Tensor, d: int) -> torch.Tensor:
    """The pixels of each mask within ``d`` pixels of its contour.

    Args:
        masks (Tensor): (N, C, H, W) bool.
        d (int): Width of the band in pixels (>= 1).

    Returns:
        Tensor: (N, C, H, W) bool, ``masks`` minus their erosion by a
        (2d+1)-square, the outside of the image counting as no mask.
    """
    if d < 1:
        raise ValueError(f'inner_boundary: d={d}, at least 1 pixel expected')
    outside = F.pad((~masks).float(), (d, d, d, d), value=1.)
    # erosion of the mask = the complement of the dilated complement
    eroded = F.max_pool2d(outside, 2 * d + 1, stride=1) == 0
    return masks & ~eroded


def boundary_iou(pred: np.ndarray,
                 target: np.ndarray,
                 num_classes: int,
                 d: int,
                 batch: int = 64) -> Dict[str, object]:
    """Mean boundary IoU (%) of label maps over the classes present in
    ``target`` or ``pred``.

    Args:
        pred (np.ndarray): (N, H, W) predicted labels.
        target (np.ndarray): (N, H, W) true labels.
        num_classes (int): Labels, background included.
        d (int): Band width in pixels (see :func:`inner_boundary`).
        batch (int): Maps per step (memory).

    Returns:
        dict: ``boundary_iou`` (mean) and ``boundary_ious`` (per class;
        None for a class in neither).
    """
    if np.shape(pred) != np.shape(target) or np.ndim(target) != 3:
        raise ValueError(f'boundary_iou: (N, H, W) maps of one shape '
                         f'expected, got {np.shape(pred)} and '
                         f'{np.shape(target)}')
    inter = np.zeros(num_classes)
    union = np.zeros(num_classes)
    for start in range(0, len(target), batch):
        bands = [
            inner_boundary(
                F.one_hot(
                    torch.as_tensor(np.asarray(m[start:start + batch])).long(),
                    num_classes).permute(0, 3, 1, 2).bool(), d)
            for m in (pred, target)
        ]
        inter += (bands[0] & bands[1]).sum((0, 2, 3)).numpy()
        union += (bands[0] | bands[1]).sum((0, 2, 3)).numpy()
    ious = [100 * i / u if u else None for i, u in zip(inter, union)]
    present = [v for v in ious if v is not None]
    return dict(
        boundary_iou=float(np.mean(present)) if present else 0.,
        boundary_ious=ious)


def pixel_scores(pred: np.ndarray, target: np.ndarray, num_classes: int,
                 d: int) -> Dict[str, object]:
    """:func:`segmentation_scores` (``miou``, ``accuracy``, ``iou``) of
    every pixel, and :func:`boundary_iou` with band ``d``."""
    return dict(
        segmentation_scores(pred, target, num_classes),
        **boundary_iou(pred, target, num_classes, d))
