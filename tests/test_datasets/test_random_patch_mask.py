import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS

import mmsiameseim  # noqa: F401


def test_exact_count_uniformly_placed():
    np.random.seed(0)
    t = TRANSFORMS.build(
        dict(
            type='RandomPatchMaskGenerator',
            input_size=(4, 6),
            num_masking_patches=10))
    hits = np.zeros((4, 6))
    masks = set()
    for _ in range(400):
        mask = t({})['mask']
        assert mask.shape == (4, 6) and mask.dtype == bool
        assert mask.sum() == 10
        hits += mask
        masks.add(mask.tobytes())
    assert len(masks) > 300  # not one fixed pattern
    # every patch is masked about 10 / 24 of the time
    assert np.abs(hits / 400 - 10 / 24).max() < 0.12


@pytest.mark.parametrize('count, message', [
    (10, 'does not fit the grid'),
    (9, 'masks every patch, so the encoder would see none'),
])
def test_count_that_leaves_no_visible_patch_is_a_config_error(count, message):
    with pytest.raises(
            ValueError, match=message + r' of a 3x3 grid.*valid: 0 to 8'):
        TRANSFORMS.build(
            dict(
                type='RandomPatchMaskGenerator',
                input_size=3,
                num_masking_patches=count))
