"""The crop-geometry contract between the two-view pipeline and SiameseIM.

``TwoViewRandomResizedCrop`` writes, per sample, ``crop_boxes`` (2, 4) =
(top, left, height, width) of view a and view b in the unflipped image it
received, ``flips`` (2,) and ``crop_source_shape`` (H, W) of that image;
``PackInputs(algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'])``
carries them to the model, which turns them into
:class:`~mmsiameseim.models.utils.CropPairOffsets`. The crop size, the mask
generator's grid and the neck's grid are one patch grid (``patch_grid`` in
the configs). The checks below name the key or option at fault.
"""
from typing import List, Optional, Sequence, Tuple, Union

import torch
from mmpretrain.structures import DataSample

GridSize = Union[int, Sequence[int]]


def _pair(size: GridSize) -> Tuple[int, int]:
    return (size, size) if isinstance(size, int) else tuple(size)


def crop_source_shapes(samples: List[DataSample]) -> torch.Tensor:
    """(B, 2) height and width of the image each sample's crops were taken
    from: its ``crop_source_shape``, or, when it has none, its
    ``ori_shape`` metainfo (the same size only when nothing padded or
    resized the image before the crop, e.g. samples built by hand)."""
    shapes = []
    for i, sample in enumerate(samples):
        shape = sample.get('crop_source_shape', sample.get('ori_shape'))
        if shape is None:
            raise KeyError(
                f"data sample {i} has neither 'crop_source_shape' nor an "
                "'ori_shape' metainfo: SiameseIM needs the size of the image "
                'the crops were taken from. TwoViewRandomResizedCrop sets '
                "'crop_source_shape'; pack it with PackInputs(algorithm_keys="
                "['crop_boxes', 'flips', 'crop_source_shape'])")
        shapes.append([float(shape[0]), float(shape[1])])
    return torch.tensor(shapes)


def check_boxes_inside(boxes: torch.Tensor, shapes: torch.Tensor,
                       samples: List[DataSample]) -> None:
    """Refuse a crop box (B, 2, 4) outside its source image (B, 2): the
    source size is then the wrong one (e.g. the ``ori_shape`` of an image
    padded before the crop), which would shift the offsets of mirrored
    pairs."""
    top, left, h, w = boxes.unbind(-1)  # each (B, 2)
    H, W = shapes[:, :1], shapes[:, 1:]
    bad = (top < 0) | (left < 0) | (top + h > H) | (left + w > W)
    if bool(bad.any()):
        i, k = (int(x) for x in bad.nonzero()[0])
        key = ('crop_source_shape'
               if 'crop_source_shape' in samples[i] else 'ori_shape')
        raise ValueError(
            f'data sample {i}: the crop box (top, left, h, w) '
            f'{boxes[i, k].tolist()} of view {"ab"[k]} does not fit in the '
            f'{int(H[i])}x{int(W[i])} source image given by {key!r}; pack '
            "TwoViewRandomResizedCrop's 'crop_source_shape' (the size of "
            'the image it cropped, after any Pad or resize before it)')


def check_mask_grid(mask: torch.Tensor, grid_size: GridSize) -> None:
    """Refuse masks (B, h, w) or (B, h * w) off the neck's ``grid_size``."""
    grid = _pair(grid_size)
    if mask[0].numel() != grid[0] * grid[1] or (
            mask.dim() == 3 and tuple(mask.shape[1:]) != grid):
        raise ValueError(
            f'the masks are {"x".join(map(str, mask.shape[1:]))} patches '
            f"but the neck's grid_size is {grid_size}: give the mask "
            "generator's input_size, the neck's grid_size and the crop's "
            "size / patch_size one patch grid (the configs' `patch_grid`)")


def check_patch_grid(transforms: Sequence, patch_size: GridSize,
                     grid_size: GridSize,
                     target_grid_size: Optional[GridSize] = None) -> None:
    """Refuse a training pipeline whose crop or mask generator is off the
    model's patch grid.

    Args:
        transforms (Sequence): Built transforms of the training pipeline.
        patch_size (int | tuple): The backbone's patch size.
        grid_size (int | tuple): The neck's patch grid of view a.
        target_grid_size (int | tuple, optional): The neck's grid of view
            b when it differs. Defaults to None (``grid_size``).

    Raises:
        ValueError: naming each transform option that disagrees.
    """
    from mmpretrain.datasets.transforms import BEiTMaskGenerator

    from ...datasets.transforms import (RandomPatchMaskGenerator,
                                        TwoViewRandomResizedCrop)
    patch, grid = _pair(patch_size), _pair(grid_size)
    target = _pair(target_grid_size or grid_size)
    wrong = []
    for t in transforms:
        name = type(t).__name__
        if isinstance(t, TwoViewRandomResizedCrop):
            for option, size, want in (('size', t.size, grid),
                                       ('target_size', t.target_size, target)):
                if tuple(size) != (want[0] * patch[0], want[1] * patch[1]):
                    wrong.append(f'{name} {option}={tuple(size)} is not the '
                                 f'{want[0]}x{want[1]} patch grid at patch '
                                 f'size {patch[0]}x{patch[1]}')
        elif isinstance(t, (BEiTMaskGenerator, RandomPatchMaskGenerator)):
            if (t.height, t.width) != grid:
                wrong.append(f'{name} input_size={(t.height, t.width)}')
    if wrong:
        raise ValueError(
            "the training pipeline does not use the model's patch grid "
            f'(neck grid_size={grid_size}, target_grid_size='
            f'{target_grid_size}, backbone patch size {patch[0]}): ' +
            '; '.join(wrong) + ". Set the crop size, the mask generator's "
            "input_size and the neck's grid_size from one variable (the "
            "configs' `patch_grid`)")
