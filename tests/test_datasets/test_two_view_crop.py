import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS

import mmsiameseim  # noqa: F401


def _coord_image(H=90, W=120):
    yy, xx = np.mgrid[0:H, 0:W]
    return np.stack(
        [xx * 255 // (W - 1), yy * 255 // (H - 1),
         np.full_like(xx, 128)], -1).astype(np.uint8)


def test_views_match_recorded_boxes_and_flips():
    np.random.seed(0)
    H, W, size = 90, 120, 24
    img = _coord_image(H, W)
    t = TRANSFORMS.build(
        dict(type='TwoViewRandomResizedCrop', size=size, scale=(0.2, 1.0)))
    flipped = 0
    for _ in range(30):
        res = t(dict(img=img.copy(), ori_shape=(7, 9)))
        assert res['crop_boxes'].dtype == np.float32
        assert res['crop_boxes'].shape == (2, 4)
        assert res['flips'].dtype == bool
        # the boxes' frame under its own key; the loaded shape is left as is
        assert res['crop_source_shape'] == (H, W)
        assert res['ori_shape'] == (7, 9)
        for k in range(2):
            view = res['img'][k].astype(float)
            top, left, h, w = res['crop_boxes'][k]
            assert 0 <= top and top + h <= H and 0 <= left and left + w <= W
            px = py = size // 2 - 3
            fx = (px + .5) / size
            fx = 1 - fx if res['flips'][k] else fx
            ex = (left + fx * w - .5) * 255 / (W - 1)
            ey = (top + (py + .5) / size * h - .5) * 255 / (H - 1)
            assert abs(view[py, px, 0] - ex) < 6
            assert abs(view[py, px, 1] - ey) < 6
            flipped += int(res['flips'][k])
    assert 0 < flipped < 60


@pytest.mark.parametrize('shape', [(20, 30), (20, 30, 3), (20, 30, 4),
                                   (5, 7, 3)])
def test_grayscale_rgba_and_small_images(shape):
    img = np.random.randint(0, 255, shape, dtype=np.uint8)
    t = TRANSFORMS.build(dict(type='TwoViewRandomResizedCrop', size=16))
    res = t(dict(img=img))
    for view in res['img']:
        assert view.shape == (16, 16) + tuple(shape[2:])
        assert view.dtype == np.uint8


def test_lower_resolution_target():
    t = TRANSFORMS.build(
        dict(type='TwoViewRandomResizedCrop', size=32, target_size=16))
    res = t(dict(img=_coord_image()))
    assert res['img'][0].shape[:2] == (32, 32)
    assert res['img'][1].shape[:2] == (16, 16)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match='scale'):
        TRANSFORMS.build(
            dict(type='TwoViewRandomResizedCrop', size=8, scale=(0.5, 0.1)))
    t = TRANSFORMS.build(dict(type='TwoViewRandomResizedCrop', size=8))
    with pytest.raises(TypeError, match='results\\["img"\\]'):
        t(dict(img=[np.zeros((4, 4, 3), np.uint8)]))


def test_same_view_gives_one_crop_twice_and_the_identity_geometry():
    import torch

    from mmsiameseim.models.utils import (crop_pair_offsets,
                                          relative_patch_centres)
    np.random.seed(1)
    t = TRANSFORMS.build(
        dict(type='TwoViewRandomResizedCrop', size=32, same_view=True))
    img = _coord_image()
    for _ in range(5):
        res = t(dict(img=img.copy()))
        assert np.array_equal(res['img'][0], res['img'][1])
        assert res['img'][0] is not res['img'][1]
        assert np.array_equal(res['crop_boxes'][0], res['crop_boxes'][1])
        assert res['flips'][0] == res['flips'][1]
        off = crop_pair_offsets(
            torch.from_numpy(res['crop_boxes'])[None],
            torch.from_numpy(res['flips'])[None],
            torch.tensor([float(img.shape[1])]))
        rows, cols = relative_patch_centres(off, 4)
        grid_r, grid_c = torch.meshgrid(
            torch.arange(4.), torch.arange(4.), indexing='ij')
        torch.testing.assert_close(rows[0], grid_r.flatten())
        torch.testing.assert_close(cols[0], grid_c.flatten())
    with pytest.raises(ValueError, match='same_view'):
        TRANSFORMS.build(
            dict(
                type='TwoViewRandomResizedCrop',
                size=32,
                target_size=16,
                same_view=True))


@pytest.mark.parametrize('channels', [None, 3, 4])
def test_pillow_backend_resizes_like_the_authors_torchvision_crop(channels):
    """backend='pillow': each view equals torchvision's ``resized_crop`` of
    a PIL image with bicubic (the authors' pipeline), which antialiases
    when shrinking; cv2's bicubic aliases a fine checkerboard."""
    import torchvision.transforms.functional as F
    from PIL import Image
    yy, xx = np.mgrid[0:300, 0:400]
    board = (((yy // 2 + xx // 2) % 2) * 255).astype(np.uint8)
    img = board if channels is None else np.stack(
        [board, 255 - board, board // 2, board][:channels], -1)
    np.random.seed(0)
    pil = TRANSFORMS.build(
        dict(
            type='TwoViewRandomResizedCrop',
            size=64,
            scale=(0.3, 1.0),
            backend='pillow'))
    for _ in range(3):
        res = pil(dict(img=img.copy()))
        for view, (top, left, h, w), flip in zip(res['img'], res['crop_boxes'],
                                                 res['flips']):
            bands = [img] if img.ndim == 2 or img.shape[2] == 3 else \
                [img[..., c] for c in range(img.shape[2])]
            want = [
                np.asarray(
                    F.resized_crop(
                        Image.fromarray(np.ascontiguousarray(b)), int(top),
                        int(left), int(h), int(w), [64, 64],
                        F.InterpolationMode.BICUBIC)) for b in bands
            ]
            want = want[0] if len(want) == 1 else np.stack(want, -1)
            if flip:
                want = want[:, ::-1]
            assert view.shape == want.shape and view.dtype == np.uint8
            assert np.array_equal(view, want)
    # the shrunk checkerboard is flat grey with PIL; cv2 aliases it
    crop = board[:250, :250]  # shrink by 3.9
    t_cv2 = TRANSFORMS.build(dict(type='TwoViewRandomResizedCrop', size=64))
    t_pil = TRANSFORMS.build(
        dict(type='TwoViewRandomResizedCrop', size=64, backend='pillow'))
    grey = np.abs(t_pil.resize(crop, (64, 64)).astype(float) - 127.5).mean()
    aliased = np.abs(t_cv2.resize(crop, (64, 64)).astype(float) - 127.5).mean()
    assert grey < 5 < 40 < aliased


def test_unknown_backend_or_filter_is_refused():
    with pytest.raises(ValueError, match='backend'):
        TRANSFORMS.build(
            dict(type='TwoViewRandomResizedCrop', size=8, backend='skimage'))
    with pytest.raises(ValueError, match='not a PIL filter'):
        TRANSFORMS.build(
            dict(
                type='TwoViewRandomResizedCrop',
                size=8,
                interpolation='area',
                backend='pillow'))
