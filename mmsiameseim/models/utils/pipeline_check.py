"""The training pipeline against the model's patch grid, before any data is
loaded (build time: ``FaultTolerantRunner`` when it builds the training
loop, through ``SiameseIM.check_train_pipeline``; the benchmarks).

:func:`~.geometry.check_batch_grid` checks each batch.
"""
from functools import partial
from typing import Optional, Sequence, Tuple

from mmengine.model import is_model_wrapper
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


def mask_generator_grid(transform) -> Optional[Tuple[int, int]]:
    """The patch grid (h, w) of the mask a transform generates: this
    package's and mmpretrain's BEiT mask generators (``input_size`` in
    patches) and mmpretrain's ``SimMIMMaskGenerator`` (``input_size`` in
    pixels over ``model_patch_size``); None for other transforms."""
    from mmpretrain.datasets.transforms import (BEiTMaskGenerator,
                                                SimMIMMaskGenerator)

    from ...datasets.transforms import RandomPatchMaskGenerator
    if isinstance(transform, (BEiTMaskGenerator, RandomPatchMaskGenerator)):
        return transform.height, transform.width
    if isinstance(transform, SimMIMMaskGenerator):
        side = transform.rand_size * transform.scale
        return side, side
    return None


def check_mask_grid(backbone, transforms: Sequence) -> None:
    """Refuse a training pipeline whose mask generator's grid is not the
    backbone's patch grid (``patch_resolution``: its ``img_size`` over its
    patch size, as mmpretrain's ViTs and Swins have it), before any data is
    loaded, with the value to set. Any algorithm (SimMIM, BEiT, a model of
    one's own): ``FaultTolerantRunner`` runs it when it builds the
    training loop. Nothing is checked for a backbone without
    ``patch_resolution``.

    Raises:
        ValueError: naming the generator, its ``input_size`` and the grid.
    """
    grid = getattr(backbone, 'patch_resolution', None)
    if grid is None:
        return
    grid = tuple(int(g) for g in to_2tuple(grid))
    for t in transforms:
        mask = mask_generator_grid(t)
        if mask is None or tuple(mask) == grid:
            continue
        name = type(t).__name__
        if name == 'SimMIMMaskGenerator':
            got = (f'input_size={t.input_size} (pixels) / model_patch_size='
                   f'{t.model_patch_size} = a {mask[0]}x{mask[1]} grid')
            want = ('set input_size to the image size the backbone is built '
                    'for and model_patch_size to its patch size')
        else:
            got = f'input_size={mask} (in patches)'
            want = f'set input_size={grid[0]}' if grid[0] == grid[1] \
                else f'set input_size={grid}'
        raise ValueError(
            f'the mask of {name} ({got}) is not the patch grid of the '
            f'backbone {type(backbone).__name__} ({grid[0]}x{grid[1]} '
            f'patches: its img_size over its patch size): {want}, and '
            'num_masking_patches to the share of those patches to mask')


def check_train_loop(model, loop) -> None:
    """The model's check of a built training loop's pipeline, before any
    data is loaded: a model's own ``check_train_pipeline`` (SiameseIM's
    refuses a crop or mask generator off its patch grid, naming the
    options); for any other model, :func:`check_mask_grid` against its
    backbone. ``model`` may be wrapped (DDP)."""
    model = model.module if is_model_wrapper(model) else model
    check = getattr(model, 'check_train_pipeline', None)
    if check is None:
        check = partial(check_mask_grid, getattr(model, 'backbone', None))
    dataset = getattr(getattr(loop, 'dataloader', None), 'dataset', None)
    pipeline = getattr(dataset, 'pipeline', None)
    if pipeline is not None:
        check(getattr(pipeline, 'transforms', []))
