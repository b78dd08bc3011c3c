import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS
from PIL import Image

import mmsiameseim  # noqa: F401


def _img(seed=0):
    return np.random.default_rng(seed).integers(0, 256, (16, 16, 3), np.uint8)


def test_probability_zero_leaves_the_image_and_one_changes_it():
    img = _img()
    for t in (dict(type='FastRandomGrayscale'), dict(type='FastGaussianBlur')):
        off = TRANSFORMS.build(dict(t, prob=0.0))
        np.testing.assert_array_equal(off(dict(img=img.copy()))['img'], img)
        on = TRANSFORMS.build(dict(t, prob=1.0))
        out = on(dict(img=img.copy()))['img']
        assert out.shape == img.shape and out.dtype == np.uint8
        assert not np.array_equal(out, img)
    grey = TRANSFORMS.build(dict(type='FastRandomGrayscale',
                                 prob=1.0))(dict(img=img))['img']
    assert (grey[..., 0] == grey[..., 1]).all() and \
        (grey[..., 1] == grey[..., 2]).all()


@pytest.mark.parametrize('cfg,match', [
    (dict(type='FastRandomGrayscale', prob=1.5), 'prob'),
    (dict(type='FastGaussianBlur', prob=-0.1), 'prob'),
    (dict(type='FastGaussianBlur', sigma=(2.0, 0.1)), 'sigma'),
    (dict(type='FastGaussianBlur', sigma=(0.0, 1.0)), 'sigma'),
])
def test_bad_arguments_are_refused(cfg, match):
    with pytest.raises(ValueError, match=match):
        TRANSFORMS.build(cfg)


def test_jitter_refuses_what_it_cannot_take():
    jitter = TRANSFORMS.build(dict(type='FastColorJitter', brightness=0.4))
    bad_images = (Image.new('RGB', (4, 4)), np.zeros(
        (4, 4), np.uint8), np.zeros((4, 4, 3), np.float32))
    for bad in bad_images:
        with pytest.raises(TypeError, match='H x W x 3 uint8'):
            jitter(dict(img=bad))


def test_jitter_skips_left_out_adjustments():
    img = _img(1)
    jitter = TRANSFORMS.build(dict(type='FastColorJitter'))
    np.testing.assert_array_equal(jitter(dict(img=img.copy()))['img'], img)


def test_loader_to_pil(tmp_path):
    path = tmp_path / 'ok.jpg'
    Image.fromarray(_img()).save(path, quality=95)
    out = TRANSFORMS.build(dict(type='StrictLoadImageFromFile', to_pil=True))(
        dict(img_path=str(path)))
    assert isinstance(out['img'], Image.Image) and out['img'].mode == 'RGB'
    assert out['img_shape'] == out['ori_shape'] == (16, 16)
    grey = tmp_path / 'grey.png'
    Image.fromarray(_img()[..., 0]).save(grey)
    out = TRANSFORMS.build(dict(type='StrictLoadImageFromFile', to_pil=True))(
        dict(img_path=str(grey)))
    assert out['img'].mode == 'RGB'
    with pytest.raises(ValueError, match='to_float32'):
        TRANSFORMS.build(
            dict(type='StrictLoadImageFromFile', to_pil=True, to_float32=True))


@pytest.mark.parametrize('damage', ['truncated', 'garbage', 'missing'])
def test_loader_to_pil_errors_name_the_file(tmp_path, damage):
    path = tmp_path / f'{damage}.jpg'
    Image.fromarray(
        np.random.default_rng(0).integers(0, 255, (64, 64, 3),
                                          dtype=np.uint8)).save(
                                              path, quality=95)
    data = path.read_bytes()
    if damage == 'missing':
        path.unlink()
    else:
        path.write_bytes(data[:len(data) // 2] if damage ==
                         'truncated' else b'not an image at all')
    loader = TRANSFORMS.build(
        dict(type='StrictLoadImageFromFile', to_pil=True))
    with pytest.raises(OSError, match=str(path)):
        loader(dict(img_path=str(path)))
    skip = TRANSFORMS.build(
        dict(type='StrictLoadImageFromFile', to_pil=True, ignore_empty=True))
    assert skip(dict(img_path=str(path))) is None


@pytest.mark.parametrize('orientation', [1, 3, 6, 8])
def test_loader_to_pil_applies_the_exif_orientation_as_the_array_loader(
        tmp_path, orientation):
    img = Image.fromarray(_img())
    exif = img.getexif()
    exif[0x0112] = orientation
    path = str(tmp_path / f'exif{orientation}.jpg')
    img.save(path, exif=exif, quality=95)
    array = TRANSFORMS.build(dict(type='StrictLoadImageFromFile'))(
        dict(img_path=path))['img']
    pil = TRANSFORMS.build(dict(type='StrictLoadImageFromFile',
                                to_pil=True))(dict(img_path=path))['img']
    np.testing.assert_array_equal(np.asarray(pil)[..., ::-1], array)
