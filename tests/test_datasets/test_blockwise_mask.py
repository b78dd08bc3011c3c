import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS

import mmsiameseim  # noqa: F401


def test_exact_count_and_blocks():
    np.random.seed(0)
    gen = TRANSFORMS.build(
        dict(
            type='BlockwiseMaskGenerator',
            input_size=14,
            num_masking_patches=118,
            min_num_patches=16))
    for _ in range(50):
        mask = gen({})['mask']
        assert mask.dtype == bool and mask.shape == (14, 14)
        assert mask.sum() == 118


def test_without_fixed_count_may_fall_short_but_never_exceeds():
    np.random.seed(1)
    gen = TRANSFORMS.build(
        dict(
            type='BlockwiseMaskGenerator',
            input_size=4,
            num_masking_patches=10,
            min_num_patches=4,
            fixed_count=False))
    counts = [gen({})['mask'].sum() for _ in range(50)]
    assert max(counts) <= 10


def test_small_grid_tops_up():
    gen = TRANSFORMS.build(
        dict(
            type='BlockwiseMaskGenerator',
            input_size=4,
            num_masking_patches=10,
            min_num_patches=16))
    assert gen({})['mask'].sum() == 10


@pytest.mark.parametrize('count, message', [
    (65, 'does not fit the grid of a 8x8 grid'),
    (64, 'masks every patch, so the encoder would see none of a 8x8 grid'),
    (-1, 'does not fit'),
])
def test_count_that_leaves_no_visible_patch_is_a_config_error(count, message):
    with pytest.raises(ValueError, match=message + r'.*valid: 0 to 63'):
        TRANSFORMS.build(
            dict(
                type='BlockwiseMaskGenerator',
                input_size=8,
                num_masking_patches=count))
    with pytest.raises(TypeError, match='must be an int'):
        TRANSFORMS.build(
            dict(
                type='BlockwiseMaskGenerator',
                input_size=8,
                num_masking_patches=0.5))
    # every patch but one: the encoder sees one patch and the cls token
    gen = TRANSFORMS.build(
        dict(
            type='BlockwiseMaskGenerator',
            input_size=8,
            num_masking_patches=63))
    assert gen({})['mask'].sum() == 63


def test_per_view_transforms_and_packing():
    from mmcv.transforms import Compose
    pipeline = Compose([
        TRANSFORMS.build(t) for t in [
            dict(type='TwoViewRandomResizedCrop', size=16),
            dict(
                type='PerViewTransforms',
                pipelines=[
                    [dict(type='Solarize', thr=0, prob=1.0)],  # inverts view a
                    [],
                ]),
            dict(
                type='BlockwiseMaskGenerator',
                input_size=4,
                num_masking_patches=6,
                min_num_patches=2),
            dict(
                type='PackInputs',
                algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape']),
        ]
    ])
    img = np.full((20, 20, 3), 10, np.uint8)
    out = pipeline(dict(img=img, ori_shape=(20, 20)))
    a, b = out['inputs']
    assert a.shape == (3, 16, 16) and int(a.max()) == 245
    assert int(b.max()) == 10
    ds = out['data_samples']
    assert ds.mask.shape == (4, 4) and int(ds.mask.sum()) == 6
    assert ds.crop_boxes.shape == (2, 4) and ds.flips.shape == (2, )
    assert ds.ori_shape == (20, 20) and ds.crop_source_shape == (20, 20)


def test_shared_per_view_transforms_give_both_views_one_draw():
    from mmengine.registry import init_default_scope
    init_default_scope('mmpretrain')
    np.random.seed(0)
    t = TRANSFORMS.build(
        dict(
            type='PerViewTransforms',
            shared=True,
            pipelines=[[
                dict(type='Solarize', thr=128, prob=0.5),
                dict(type='Brightness', magnitude=0.5, prob=1.0)
            ]]))
    img = np.random.randint(0, 256, (8, 8, 3), dtype=np.uint8)
    for _ in range(10):
        out = t(dict(img=[img.copy(), img.copy()]))['img']
        assert np.array_equal(out[0], out[1]) and out[0] is not out[1]
        assert not np.array_equal(out[0], img)
    with pytest.raises(ValueError, match='exactly one pipeline'):
        TRANSFORMS.build(
            dict(type='PerViewTransforms', shared=True, pipelines=[[], []]))


@pytest.mark.person_matrix(
    'train', 'mixing',
    "a mask generator given SimMIMMaskGenerator's input_size in pixels "
    '(192 for a 192-pixel image) is refused at the first sample, saying it '
    'counts patches and what to set')
@pytest.mark.parametrize(
    'kind', ['BlockwiseMaskGenerator', 'RandomPatchMaskGenerator'])
def test_a_grid_in_pixels_is_refused_naming_the_unit(kind):
    gen = TRANSFORMS.build(
        dict(type=kind, input_size=192, num_masking_patches=100))
    with pytest.raises(ValueError, match='counts patches, not pixels') as e:
        gen(dict(img_shape=(192, 192)))
    assert 'input_size=(192, 192)' in str(e.value)
    assert '48 for 4-pixel' in str(e.value)
    assert gen(dict(img_shape=(384, 384)))['mask'].shape == (192, 192)
    assert gen({})['mask'].sum() == 100  # no image shape: nothing to check
