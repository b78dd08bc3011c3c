import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS

import mmsiameseim  # noqa: F401
import projects.speed.pil_color_jitter  # noqa: F401
from tests.helpers import photo_crops

JITTER = dict(brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1)


def _crops(count, size=64, seed=0):
    """Real photo crops, BGR as the pillow loader gives them."""
    return (np.ascontiguousarray(rgb[..., ::-1])
            for rgb in photo_crops(count, size, seed))


@pytest.mark.filterwarnings('ignore:Only use')
def test_output_identical_to_mmpretrain_colorjitter_for_fixed_seeds():
    ref = TRANSFORMS.build(dict(type='ColorJitter', **JITTER))
    fast = TRANSFORMS.build(dict(type='PILColorJitter', **JITTER))
    hues = []
    for seed, img in enumerate(_crops(60)):
        np.random.seed(seed)
        expected = ref(dict(img=img.copy()))['img']
        np.random.seed(seed)
        hues.append(fast._rand_params()[4])
        np.random.seed(seed)
        got = fast(dict(img=img.copy()))['img']
        assert got.dtype == np.uint8 and got.flags['C_CONTIGUOUS']
        np.testing.assert_array_equal(got, expected)
    # both signs of the hue shift were exercised
    assert min(hues) < 0 < max(hues)


@pytest.mark.filterwarnings('ignore:Only use')
def test_each_jitter_alone_matches_too():
    img = next(_crops(1))
    for kw in (dict(brightness=0.4), dict(contrast=0.4), dict(saturation=0.2),
               dict(hue=0.1)):
        ref = TRANSFORMS.build(dict(type='ColorJitter', **kw))
        fast = TRANSFORMS.build(dict(type='PILColorJitter', **kw))
        np.random.seed(3)
        expected = ref(dict(img=img.copy()))['img']
        np.random.seed(3)
        np.testing.assert_array_equal(
            fast(dict(img=img.copy()))['img'], expected)
