"""Pillow's colour operations on arrays against Pillow itself, called as the
authors' torchvision transforms call it (torchvision.transforms.

functional on PIL images), on real photographs.
"""
import numpy as np
import pytest
import torchvision.transforms.functional as TF
from PIL import Image, ImageFilter

from mmsiameseim.datasets.transforms import pillow_colour as pc
from tests.helpers import photo_crops


def _views(count, size=224, seed=0):
    """(PIL RGB, BGR array) crops of the real sample photographs."""
    for rgb in photo_crops(count, size, seed):
        yield Image.fromarray(rgb), np.ascontiguousarray(rgb[..., ::-1])


def _diff(ref: Image.Image, bgr: np.ndarray) -> np.ndarray:
    assert bgr.dtype == np.uint8 and bgr.shape == (ref.height, ref.width, 3)
    return np.abs(np.asarray(ref).astype(int) - bgr[..., ::-1])


@pytest.mark.parametrize('name,reference,ours,lo,hi', [
    ('brightness', TF.adjust_brightness, pc.brightness, 0.6, 1.4),
    ('contrast', TF.adjust_contrast, pc.contrast, 0.6, 1.4),
    ('saturation', TF.adjust_saturation, pc.saturation, 0.8, 1.2),
])
def test_enhancements_are_pillows_exactly(name, reference, ours, lo, hi):
    rng = np.random.default_rng(1)
    for pil, bgr in _views(12):
        # the ranges of ColorJitter(0.4, 0.4, 0.2), and their ends
        for factor in (lo, hi, rng.uniform(lo, hi), 0.0, 2.5):
            assert _diff(reference(pil, factor), ours(bgr, factor)).max() \
                == 0, (name, factor)


def test_grayscale_is_pillows_exactly():
    for pil, bgr in _views(8):
        ref = TF.rgb_to_grayscale(pil, num_output_channels=3)
        assert _diff(ref, pc.grayscale(bgr)).max() == 0
        np.testing.assert_array_equal(
            pc.luma(bgr), np.asarray(pil.convert('L')))


def test_hue_within_its_documented_tolerance():
    """Pillow's uint8 HSV round trip in float32: a pixel on a quantisation
    boundary may round the other way (documented: at most 0.5 % of the pixels,
    by at most 8 / 255)."""
    rng = np.random.default_rng(2)
    worst, fractions = 0, []
    for pil, bgr in _views(16):
        for factor in (-0.1, 0.1, rng.uniform(-0.1, 0.1), 0.0):
            d = _diff(TF.adjust_hue(pil, factor), pc.hue(bgr, factor))
            worst = max(worst, d.max())
            fractions.append((d > 0).mean())
    assert worst <= 8
    assert max(fractions) <= 0.005
    assert np.mean(fractions) <= 0.002


def test_gaussian_blur_within_its_documented_tolerance():
    """Pillow's three-pass box blur, the authors' GaussianBlur
    (``ImageFilter.GaussianBlur(radius=sigma)``): for sigma drawn from (0.1, 2)
    within 1 / 255 on at most 0.01 % of the pixels; at round radii (exact
    halves, rounded to even by OpenCV) within 2 / 255 on at most 15 %."""
    rng = np.random.default_rng(3)
    fractions = []
    for pil, bgr in _views(6):
        for radius in map(float, rng.uniform(0.1, 2.0, 5)):
            ref = pil.filter(ImageFilter.GaussianBlur(radius=radius))
            d = _diff(ref, pc.gaussian_blur(bgr, radius))
            assert d.max() <= 1, radius
            fractions.append((d > 0).mean())
        for radius in (0.1, 0.5, 1.0, 1.5, 2.0):
            ref = pil.filter(ImageFilter.GaussianBlur(radius=radius))
            d = _diff(ref, pc.gaussian_blur(bgr, radius))
            assert d.max() <= 2 and (d > 0).mean() <= 0.15, radius
    assert max(fractions) <= 1e-4
    # blurring does blur: a real change
    pil, bgr = next(_views(1))
    assert np.abs(pc.gaussian_blur(bgr, 2.0).astype(int) - bgr).mean() > 1
