"""The batch geometry module: one error naming every option off the grid,
and the check of a pipeline agreeing with the check of its batches."""
import os

import numpy as np
import pytest
import torch
from mmcv.transforms import Compose
from mmpretrain.registry import TRANSFORMS
from mmpretrain.structures import DataSample

import mmsiameseim  # noqa: F401
from mmsiameseim.models.utils import (PatchGrid, batch_geometry,
                                      check_batch_grid, check_patch_grid)
from tests.helpers import ROOT

# patch 8, a 4x4 grid for view a and a 2x2 (lower-resolution) one for view b
GRID = PatchGrid(patch_size=(8, 8), grid_size=4, target_grid_size=2)


def test_the_grid_in_pixels():
    assert GRID.pixels() == (32, 32)
    assert GRID.pixels(target=True) == (16, 16)
    assert PatchGrid(16, (14, 10)).pixels(target=True) == (224, 160)


def test_one_error_names_every_option_off_the_grid():
    views = [torch.zeros(2, 3, 40, 40), torch.zeros(2, 3, 32, 32)]
    mask = torch.zeros(2, 5, 5, dtype=torch.bool)
    with pytest.raises(ValueError) as err:
        check_batch_grid(GRID, mask, views)
    message = str(err.value)
    assert message.startswith(
        "this batch is off the model's patch grid (backbone patch size 8x8, "
        'neck grid_size=4, target_grid_size=2): ')
    assert "the masks are 5x5 patches but the neck's grid_size is 4: give " \
        "the mask generator's input_size=4" in message
    assert "view a is 40x40 pixels, not the model's 32x32" in message
    assert 'give TwoViewRandomResizedCrop size=32' in message
    assert "view b is 32x32 pixels, not the model's 16x16" in message
    assert 'give TwoViewRandomResizedCrop target_size=16' in message
    # the docs page on this install (a checkout's docs/, or the wheel's)
    assert message.endswith('on one grid (img_size // patch_size; ' +
                            os.path.join(ROOT, 'docs', 'mixing.md') +
                            '#changing-the-patch-grid-width-or-patch-size)')
    # on the grid: nothing to say, flattened masks too
    check_batch_grid(GRID, torch.zeros(2, 16, dtype=torch.bool),
                     [torch.zeros(2, 3, 32, 32),
                      torch.zeros(2, 3, 16, 16)])


def _photo():
    from sklearn.datasets import load_sample_image
    return load_sample_image('china.jpg')  # a real 427 x 640 photograph


@pytest.mark.parametrize(
    'crop, mask_grid',
    [
        (dict(size=32, target_size=16), 4),  # on the grid
        (dict(size=40, target_size=16), 4),  # the crop off the grid
        (dict(size=32, target_size=32), 4),  # view b off the target grid
        (dict(size=32, target_size=16), 5),  # the mask off the grid
    ])
def test_the_pipeline_check_and_the_batch_check_agree(crop, mask_grid):
    """What check_patch_grid refuses before loading any data, the batch
    check refuses on the batches that pipeline makes, and the other way
    round: training can rely on the batch check alone."""
    from mmengine.registry import init_default_scope
    init_default_scope('mmpretrain')
    transforms = [
        TRANSFORMS.build(t) for t in [
            dict(type='TwoViewRandomResizedCrop', **crop),
            dict(
                type='BlockwiseMaskGenerator',
                input_size=mask_grid,
                num_masking_patches=6,
                min_num_patches=2,
                fixed_count=True),
            dict(
                type='PackInputs',
                algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape']),
        ]
    ]
    np.random.seed(0)
    packed = [Compose(transforms)(dict(img=_photo())) for _ in range(2)]
    views = [
        torch.stack([p['inputs'][k] for p in packed]).float() for k in range(2)
    ]
    samples = [p['data_samples'] for p in packed]
    assert all(isinstance(s, DataSample) for s in samples)

    def refused(check):
        try:
            check()
        except ValueError:
            return True
        return False

    by_pipeline = refused(lambda: check_patch_grid(transforms, GRID))
    by_batch = refused(lambda: batch_geometry(samples, GRID, 'cpu', views))
    assert by_pipeline == by_batch
    assert by_batch == (
        crop != dict(size=32, target_size=16) or mask_grid != 4)
    if not by_batch:
        geo = batch_geometry(samples, GRID, 'cpu', views)
        assert geo.mask.shape == (2, 16) and geo.mask.sum(1).tolist() == [6, 6]
        assert geo.offsets.delta_h.shape == (2, )
