"""Every image mode reaches the pipelines as 8-bit RGB at its real brightness
and orientation, or is refused naming the file (issue 24 item 10).

Each test writes a file of known pixel values in that mode and reads it back
through ``to_rgb`` and through ``StrictLoadImageFromFile``.
"""
import cv2
import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS
from PIL import Image

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets.transforms.strict_loading import (ImageModeError,
                                                            to_rgb)

SIZE = (12, 8)  # width, height

MODE = pytest.mark.fault_matrix


def _read(path):
    """to_rgb of the file, as an (H, W, 3) uint8 array."""
    with Image.open(path) as img:
        out = to_rgb(img, str(path))
    assert out.mode == 'RGB'
    return np.asarray(out)


def _load(path, **kwargs):
    """StrictLoadImageFromFile's image (BGR), as the pipelines get it."""
    loader = TRANSFORMS.build(dict(type='StrictLoadImageFromFile', **kwargs))
    return loader(dict(img_path=str(path)))['img']


def _uniform(arr, rgb, tol=0):
    assert arr.shape[2] == 3 and arr.dtype == np.uint8
    diff = np.abs(arr.astype(int) - np.array(rgb)).max()
    assert diff <= tol, f'expected {rgb}, got {arr.reshape(-1, 3)[0]}'


# (name, writer(path) -> path, the 8-bit RGB expected everywhere)
def _one_bit(p):
    img = Image.new('1', SIZE, 1)
    img.save(p / 'one.png')
    return p / 'one.png'


def _grey(p):
    Image.new('L', SIZE, 100).save(p / 'grey.png')
    return p / 'grey.png'


def _grey_alpha(p):
    Image.new('LA', SIZE, (100, 0)).save(p / 'la.png')  # fully transparent
    return p / 'la.png'


def _palette(p, ext):
    img = Image.new('P', SIZE, 1)
    img.putpalette([0, 0, 0, 10, 20, 30] + [0] * 762)
    img.save(p / f'palette.{ext}', transparency=1)
    return p / f'palette.{ext}'


def _rgb(p):
    Image.new('RGB', SIZE, (10, 20, 30)).save(p / 'rgb.png')
    return p / 'rgb.png'


def _rgba(p):
    Image.new('RGBA', SIZE, (10, 20, 30, 0)).save(p / 'rgba.png')
    return p / 'rgba.png'


def _cmyk(p):
    Image.new('CMYK', SIZE, (0, 255, 0, 0)).save(p / 'cmyk.tif')  # magenta
    return p / 'cmyk.tif'


def _ycbcr(p):
    Image.new('YCbCr', SIZE, (128, 128, 128)).save(p / 'ycbcr.tif')
    return p / 'ycbcr.tif'


def _i16_png(p):
    # the case: mmcv's Pillow path made this (almost) white
    Image.fromarray(np.full(SIZE[::-1], 257 * 100,
                            np.uint16)).save(p / 'i16.png')
    return p / 'i16.png'


def _i16b_tif(p):
    Image.fromarray(np.full(SIZE[::-1], 257 * 60, '>u2')).save(p / 'i16b.tif')
    return p / 'i16b.tif'


def _i32_tif(p):
    Image.fromarray(np.full(SIZE[::-1], 257 * 50,
                            np.int32)).save(p / 'i32.tif')
    return p / 'i32.tif'


def _float_tif(p):
    Image.fromarray(np.full(SIZE[::-1], 0.2, np.float32)).save(p / 'f.tif')
    return p / 'f.tif'


def _rgb16_png(p):
    rgb = np.empty(SIZE[::-1] + (3, ), np.uint16)
    rgb[...] = (257 * 10, 257 * 20, 257 * 200)
    cv2.imwrite(str(p / 'rgb16.png'), rgb[..., ::-1])  # OpenCV writes BGR
    return p / 'rgb16.png'


def _rgba16_png(p):
    rgba = np.empty(SIZE[::-1] + (4, ), np.uint16)
    rgba[...] = (257 * 10, 257 * 20, 257 * 200, 0)
    cv2.imwrite(str(p / 'rgba16.png'), rgba[..., [2, 1, 0, 3]])
    return p / 'rgba16.png'


def _animated(p, ext):
    frames = [Image.new('RGB', SIZE, c) for c in ((200, 0, 0), (0, 0, 200))]
    frames[0].save(
        p / f'anim.{ext}',
        save_all=True,
        append_images=frames[1:],
        duration=100,
        loop=0,
        **({
            'lossless': True
        } if ext == 'webp' else {}))
    with Image.open(p / f'anim.{ext}') as img:
        assert img.is_animated and img.n_frames == 2
    return p / f'anim.{ext}'


CASES = [
    ('1-bit', _one_bit, (255, 255, 255), 0),
    ('L', _grey, (100, 100, 100), 0),
    ('LA', _grey_alpha, (100, 100, 100), 0),
    ('P png transparency', lambda p: _palette(p, 'png'), (10, 20, 30), 0),
    ('P gif transparency', lambda p: _palette(p, 'gif'), (10, 20, 30), 0),
    ('RGB', _rgb, (10, 20, 30), 0),
    ('RGBA', _rgba, (10, 20, 30), 0),
    ('CMYK', _cmyk, (255, 0, 255), 0),
    ('YCbCr', _ycbcr, (128, 128, 128), 1),
    ('I;16 png', _i16_png, (100, 100, 100), 0),
    ('I;16B tif', _i16b_tif, (60, 60, 60), 0),
    ('I tif', _i32_tif, (50, 50, 50), 0),
    ('F tif', _float_tif, (51, 51, 51), 0),
    ('16-bit RGB png', _rgb16_png, (10, 20, 200), 1),
    ('16-bit RGBA png', _rgba16_png, (10, 20, 200), 1),
    ('animated gif', lambda p: _animated(p, 'gif'), (200, 0, 0), 0),
    ('animated webp', lambda p: _animated(p, 'webp'), (200, 0, 0), 0),
]


@MODE('datasets', 'image_mode',
      'every mode becomes 8-bit RGB at its real brightness')
@pytest.mark.parametrize(
    'name,write,rgb,tol', CASES, ids=[c[0] for c in CASES])
def test_mode_reads_at_real_brightness(tmp_path, name, write, rgb, tol):
    path = write(tmp_path)
    out = _read(path)
    assert out.shape == (SIZE[1], SIZE[0], 3)
    _uniform(out, rgb, tol)
    bgr = _load(path)  # the loader hands the pipelines BGR, as mmcv does
    _uniform(bgr, rgb[::-1], tol)
    grey = _load(path, color_type='grayscale')
    assert grey.shape == (SIZE[1], SIZE[0]) and grey.dtype == np.uint8
    expected = Image.new('RGB', (1, 1), rgb).convert('L').getpixel((0, 0))
    assert abs(int(grey[0, 0]) - expected) <= tol + 1


@MODE(
    'datasets', 'image_mode', '16-bit samples are scaled by 1/257, never '
    'stretched between the minimum and maximum')
def test_sixteen_bit_gradient_scaled_by_type_range(tmp_path):
    values = np.arange(0, 65536, 257, dtype=np.uint16)[None, :].repeat(4, 0)
    values[:, -1] = 30000  # a dark image must stay dark: no stretching
    Image.fromarray(values).save(tmp_path / 'ramp.png')
    out = _read(tmp_path / 'ramp.png')[0, :, 0]
    expected = np.arange(256, dtype=np.uint8)
    expected[-1] = round(30000 / 257)
    np.testing.assert_array_equal(out, expected)
    # mmcv's own Pillow path clips at 255: what this loader exists to avoid
    clipped = np.asarray(Image.open(tmp_path / 'ramp.png').convert('L'))
    assert (clipped[0] == 255).mean() > 0.9


def _quadrant_jpeg(path, orientation):
    """64 x 32 (w x h) blue JPEG, top-left quadrant red, with an EXIF
    orientation tag."""
    arr = np.zeros((32, 64, 3), np.uint8)
    arr[...] = (0, 0, 255)
    arr[:16, :32] = (255, 0, 0)
    img = Image.fromarray(arr)
    exif = img.getexif()
    exif[0x0112] = orientation
    img.save(path, quality=95, exif=exif)


# orientation tag -> (height, width) as shown, and where the red quadrant is
ORIENTATIONS = {
    1: ((32, 64), 'top-left'),
    2: ((32, 64), 'top-right'),  # mirrored horizontally
    3: ((32, 64), 'bottom-right'),  # rotated 180
    6: ((64, 32), 'top-right'),  # shown rotated 90 clockwise
    8: ((64, 32), 'bottom-left'),  # shown rotated 90 counter-clockwise
}


def _red_quadrant(rgb):
    h, w = rgb.shape[:2]
    quads = {
        'top-left': rgb[:h // 2, :w // 2],
        'top-right': rgb[:h // 2, w // 2:],
        'bottom-left': rgb[h // 2:, :w // 2],
        'bottom-right': rgb[h // 2:, w // 2:],
    }
    return [k for k, q in quads.items() if q[2:-2, 2:-2, 0].mean() > 200]


@MODE('datasets', 'image_mode', 'an EXIF-rotated JPEG is read in the '
      'orientation a viewer shows')
@pytest.mark.parametrize('orientation', sorted(ORIENTATIONS))
def test_exif_orientation_applied(tmp_path, orientation):
    path = tmp_path / f'exif{orientation}.jpg'
    _quadrant_jpeg(path, orientation)
    shape, red = ORIENTATIONS[orientation]
    rgb = _read(path)
    assert rgb.shape[:2] == shape
    assert _red_quadrant(rgb) == [red]
    bgr = _load(path)
    assert _red_quadrant(np.ascontiguousarray(bgr[..., ::-1])) == [red]
    raw = _load(path, color_type='color_ignore_orientation')
    assert raw.shape[:2] == (32, 64)


@MODE('datasets', 'image_mode', 'an unsupported mode is refused naming the '
      'file and the mode')
def test_unsupported_mode_refused(tmp_path):
    path = tmp_path / 'lab.tif'
    Image.new('LAB', SIZE, (50, 128, 128)).save(path)
    with pytest.raises(ImageModeError, match=rf"{path}.*'LAB'"):
        _read(path)
    with pytest.raises(ImageModeError, match=rf"{path}.*'LAB'"):
        _load(path)


@MODE(
    'datasets', 'image_mode', "an 'I' or 'F' image outside its type's "
    'range is refused naming the file and the range found')
@pytest.mark.parametrize('values,match', [
    (np.full(SIZE[::-1], 70000, np.int32), r'mode I .*\[70000, 70000\]'),
    (np.full(SIZE[::-1], -1, np.int32), r'mode I .*\[-1, -1\]'),
    (np.full(SIZE[::-1], 255., np.float32), r'mode F .*\[255, 255\]'),
    (np.full(SIZE[::-1], np.nan, np.float32), r'mode F .*NaN'),
])
def test_out_of_range_refused(tmp_path, values, match):
    path = tmp_path / 'range.tif'
    Image.fromarray(values).save(path)
    with pytest.raises(ImageModeError, match=str(path)):
        _read(path)
    with pytest.raises(ImageModeError, match=match):
        _load(path)


@MODE(
    'datasets', 'image_mode', 'OpenCV backend: 16-bit PNG read at its '
    'real brightness (IMREAD_COLOR)')
def test_opencv_backend_sixteen_bit(tmp_path):
    bgr = _load(_rgb16_png(tmp_path), imdecode_backend='cv2')
    _uniform(bgr, (200, 20, 10), 1)
    grey = _load(_i16_png(tmp_path), imdecode_backend='cv2')
    _uniform(grey, (100, 100, 100), 1)


def test_unchanged_colour_type_refused():
    with pytest.raises(ValueError, match="color_type.*'unchanged'"):
        TRANSFORMS.build(
            dict(type='StrictLoadImageFromFile', color_type='unchanged'))
    with pytest.raises(ValueError, match="imdecode_backend.*'turbojpeg'"):
        TRANSFORMS.build(
            dict(type='StrictLoadImageFromFile', imdecode_backend='turbojpeg'))


def _float_rgb_tif(p):
    rgb = np.empty(SIZE[::-1] + (3, ), np.float32)
    rgb[...] = (0.2, 0.5, 0.9)
    cv2.imwrite(str(p / 'float_rgb.tif'), rgb[..., ::-1])
    return p / 'float_rgb.tif'


@MODE(
    'datasets', 'image_mode', 'a float or 16-bit RGB TIFF that Pillow '
    'cannot open is read by OpenCV at its real brightness')
@pytest.mark.parametrize('backend', ['pillow', 'cv2'])
def test_float_rgb_tiff_through_opencv(tmp_path, backend):
    path = _float_rgb_tif(tmp_path)
    with pytest.raises(OSError):  # Pillow alone cannot identify it
        Image.open(path)
    bgr = _load(path, imdecode_backend=backend)
    # round(255 * float32(0.9, 0.5, 0.2)): float32(0.9) * 255 = 229.49999
    _uniform(bgr, (229, 128, 51))
    grey = _load(path, imdecode_backend=backend, color_type='grayscale')
    assert grey.shape == SIZE[::-1] and grey.dtype == np.uint8


@MODE(
    'datasets', 'image_mode', 'OpenCV backend: 16-bit samples scaled by '
    '1/257; a file OpenCV cannot read is named')
def test_opencv_backend_scales_and_names(tmp_path):
    rgb = np.empty(SIZE[::-1] + (3, ), np.uint16)
    rgb[...] = 2770  # 10.78 * 257: the high byte would give 10
    cv2.imwrite(str(tmp_path / 'r.png'), rgb)
    _uniform(_load(tmp_path / 'r.png', imdecode_backend='cv2'), (11, 11, 11))
    rgb = np.full(SIZE[::-1] + (3, ), 2., np.float32)
    cv2.imwrite(str(tmp_path / 'bright.tif'), rgb)
    with pytest.raises(
            ImageModeError, match=r'bright\.tif: float32 samples .*\[2, 2\]'):
        _load(tmp_path / 'bright.tif', imdecode_backend='cv2')
    path = _i32_tif(tmp_path)  # OpenCV cannot read 32-bit integer TIFFs
    with pytest.raises(OSError, match=rf'{path}: cannot load image'):
        _load(path, imdecode_backend='cv2')


def test_array_to_uint8():
    from mmsiameseim.datasets.transforms import array_to_uint8
    np.testing.assert_array_equal(
        array_to_uint8(np.array([0, 257, 65535, 30000], np.uint16), 'x'),
        [0, 1, 255, 117])
    np.testing.assert_array_equal(
        array_to_uint8(np.array([0., 0.5, 1.], np.float64), 'x'),
        [0, 128, 255])
    with pytest.raises(ImageModeError, match='x: int32 samples'):
        array_to_uint8(np.zeros(3, np.int32), 'x')


@MODE('datasets', 'text', 'a file that is no image is named with its size '
      'and first bytes')
@pytest.mark.parametrize('content', [b'', b'<html>not found</html>'])
def test_not_an_image_named_with_its_first_bytes(tmp_path, content):
    path = tmp_path / 'photo.jpg'
    path.write_bytes(content)
    with pytest.raises(OSError) as e:
        _load(path)
    assert str(e.value).startswith(f'{path}: cannot load image')
    assert f'{len(content)} bytes, starting {content[:16]!r}' in str(e.value)


@MODE(
    'datasets', 'image_mode', "an image above Pillow's decompression-bomb "
    'limit is refused naming the file and the limit')
def test_decompression_bomb_named(tmp_path, monkeypatch):
    path = _rgb(tmp_path)  # 12 x 8 = 96 pixels
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 40)  # error above 80
    with pytest.raises(
            OSError,
            match=rf'{path}: cannot load image '
            r'\(DecompressionBombError: .*96 pixels'):
        _load(path)
