import numpy as np

import mmsiameseim  # noqa: F401


def test_negative_hue_jitter_works_and_mirrors_the_positive_shift():
    import mmcv
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    down = mmcv.adjust_hue(img, -0.1, backend='pillow')
    up = mmcv.adjust_hue(down, 0.1, backend='pillow')
    assert down.shape == img.shape and down.dtype == np.uint8
    assert not np.array_equal(down, img)
    # -25 then +25 on the uint8 hue channel: back to the start up to the
    # RGB <-> HSV rounding
    assert np.abs(up.astype(int) - img.astype(int)).mean() < 3
    assert np.array_equal(
        mmcv.adjust_hue(img, 0.0, backend='pillow'),
        mmcv.adjust_hue(img, 0.0, backend='pillow'))


def test_colour_jitter_with_hue_runs_on_many_draws():
    from mmpretrain.registry import TRANSFORMS
    t = TRANSFORMS.build(
        dict(
            type='ColorJitter',
            brightness=0.4,
            contrast=0.4,
            saturation=0.2,
            hue=0.1))
    img = np.random.default_rng(1).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    for _ in range(20):  # about half the draws have a negative hue
        assert t(dict(img=img.copy()))['img'].shape == img.shape
