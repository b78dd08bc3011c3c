"""The training pipeline against the model's patch grid, before any data is
loaded (build time: ``FaultTolerantRunner`` when it builds the training
loop, through ``SiameseIM.check_train_pipeline``; the benchmarks).

:func:`~.geometry.check_batch_grid` checks each batch.
"""
from typing import Sequence

from mmengine.utils import to_2tuple

from .geometry import SAME_GRID_HINT, PatchGrid


def check_patch_grid(transforms: Sequence, grid: PatchGrid) -> None:
    """Refuse a training pipeline (its built transforms) whose crop or mask
    generator is off the model's patch grid, before any data is loaded
    (``FaultTolerantRunner`` when it builds the training loop, through
    ``SiameseIM.check_train_pipeline``; the benchmarks;
    :func:`check_batch_grid` checks the batches).

    Args:
        transforms (Sequence): Built transforms of the training pipeline.
        grid (PatchGrid): The model's patch grid.

    Raises:
        ValueError: naming each transform option that disagrees.
    """
    from mmpretrain.datasets.transforms import BEiTMaskGenerator

    from ...datasets.transforms import (RandomPatchMaskGenerator,
                                        TwoViewRandomResizedCrop)
    patch, g = tuple(to_2tuple(grid.patch_size)), tuple(
        to_2tuple(grid.grid_size))
    target = tuple(to_2tuple(grid.target_grid_size or grid.grid_size))
    wrong = []
    for t in transforms:
        name = type(t).__name__
        if isinstance(t, TwoViewRandomResizedCrop):
            for option, size, want in (('size', t.size, g),
                                       ('target_size', t.target_size, target)):
                if tuple(size) != (want[0] * patch[0], want[1] * patch[1]):
                    wrong.append(f'{name} {option}={tuple(size)} is not the '
                                 f'{want[0]}x{want[1]} patch grid at patch '
                                 f'size {patch[0]}x{patch[1]}')
        elif isinstance(t, (BEiTMaskGenerator, RandomPatchMaskGenerator)):
            if (t.height, t.width) != g:
                wrong.append(f'{name} input_size={(t.height, t.width)}')
    if wrong:
        raise ValueError(
            "the training pipeline does not use the model's patch grid "
            f'(neck grid_size={grid.grid_size}, target_grid_size='
            f'{grid.target_grid_size}, backbone patch size {patch[0]}): ' +
            '; '.join(wrong) + '. ' + SAME_GRID_HINT)
