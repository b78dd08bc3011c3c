import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS

import mmsiameseim  # noqa: F401


def _two_views():
    np.random.seed(0)
    results = dict(img=np.random.randint(0, 256, (40, 40), np.uint8))
    results = TRANSFORMS.build(
        dict(type='TwoViewRandomResizedCrop', size=32, target_size=16))(
            results)
    return TRANSFORMS.build(
        dict(
            type='BlockwiseMaskGenerator',
            input_size=8,
            num_masking_patches=20,
            fixed_count=True))(
                results)


@pytest.mark.parametrize('index', [0, 1])
def test_keeps_one_view_with_its_geometry_and_the_mask(index):
    results = _two_views()
    views = [v.copy() for v in results['img']]
    boxes, flips, mask = (results['crop_boxes'].copy(),
                          results['flips'].copy(), results['mask'].copy())
    out = TRANSFORMS.build(dict(type='SelectView', index=index))(results)
    np.testing.assert_array_equal(out['img'], views[index])
    assert out['img_shape'] == views[index].shape[:2]
    np.testing.assert_array_equal(out['crop_boxes'], boxes[index])
    assert out['flips'] == flips[index]
    np.testing.assert_array_equal(out['mask'], mask)
    packed = TRANSFORMS.build(dict(type='PackInputs'))(out)
    assert tuple(packed['inputs'].shape) == (1, ) + views[index].shape[:2]
    assert packed['data_samples'].mask.shape == (8, 8)


def test_refuses_a_single_view_and_a_bad_index():
    with pytest.raises(ValueError, match='index must be 0 or 1'):
        TRANSFORMS.build(dict(type='SelectView', index=2))
    with pytest.raises(ValueError, match='after TwoViewRandomResizedCrop'):
        TRANSFORMS.build(dict(type='SelectView'))(
            dict(img=np.zeros((8, 8), np.uint8)))
