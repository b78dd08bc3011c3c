"""The default ImageNet two-view pipeline gives the authors' views: for the
same draws, the crop, antialiased bicubic resize and flip of their torchvision
PIL path (``F.hflip`` then ``F.resized_crop``) exactly, and their colour
transforms within the tolerance of
``mmsiameseim.datasets.transforms.pillow_colour``; tested on real JPEGs."""
import os

import numpy as np
import pytest
import sklearn.datasets
import torchvision.transforms.functional as TF
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmpretrain.registry import TRANSFORMS
from PIL import Image, ImageFilter, ImageOps
from torchvision.transforms import InterpolationMode

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets.transforms import FastColorJitter

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONFIG = os.path.join(ROOT, 'configs', 'pretrain', '_base_',
                      'imagenet_two_view_masked.py')
PHOTOS = [
    os.path.join(os.path.dirname(sklearn.datasets.__file__), 'images', name)
    for name in ('china.jpg', 'flower.jpg')
]


@pytest.fixture(scope='module')
def jpegs(tmp_path_factory):
    """The two real JPEG photographs, and ImageNet-like cuts of them (500 x 375
    and 375 x 500, quality 90)."""
    folder = tmp_path_factory.mktemp('jpegs')
    paths = list(PHOTOS)
    for i, (photo, size) in enumerate(zip(PHOTOS, [(500, 375), (375, 500)])):
        with Image.open(photo) as img:
            path = str(folder / f'cut{i}.jpg')
            img.convert('RGB').crop(
                (20, 10, 420, 410)).resize(size, Image.BICUBIC).save(
                    path, quality=90)
            paths.append(path)
    return paths


def _pipeline():
    init_default_scope('mmpretrain')  # RandomApply builds its steps there
    return [
        TRANSFORMS.build(t) for t in Config.fromfile(CONFIG).train_pipeline
    ]


def _authors_view(path, box, flip, size=224):
    """Their view for our draw: their ImageFolder loader, ``F.hflip`` of
    the whole image when flipped, then ``F.resized_crop`` at the box in
    the flipped frame, bicubic."""
    with open(path, 'rb') as f:
        img = Image.open(f).convert('RGB')
    top, left, h, w = (int(v) for v in box)
    if flip:
        img = TF.hflip(img)
        left = img.width - left - w
    return np.asarray(
        TF.resized_crop(img, top, left, h, w, [size, size],
                        InterpolationMode.BICUBIC))


def test_crop_resize_flip_are_the_authors_exactly(jpegs):
    load, crop = _pipeline()[:2]
    flips = 0
    for seed in range(12):
        for path in jpegs:
            np.random.seed(seed)
            res = crop(load(dict(img_path=path)))
            assert res['crop_source_shape'] == Image.open(path).size[::-1]
            for k in range(2):
                view = res['img'][k]
                assert view.dtype == np.uint8 and view.shape == (224, 224, 3)
                assert view.flags['C_CONTIGUOUS']
                expected = _authors_view(path, res['crop_boxes'][k],
                                         res['flips'][k])
                np.testing.assert_array_equal(view[..., ::-1], expected)
                flips += int(res['flips'][k])
    assert 0 < flips < 12 * len(jpegs) * 2  # both orientations were seen


def test_pillow_path_equals_array_path_for_the_same_draws(jpegs):
    """The loader's Pillow image and mmcv's BGR array give the same views (the
    ablation configs that load arrays crop the same pixels)."""
    crop = _pipeline()[1]
    fast = TRANSFORMS.build(dict(type='StrictLoadImageFromFile', to_pil=True))
    slow = TRANSFORMS.build(dict(type='StrictLoadImageFromFile'))
    for seed, path in enumerate(jpegs):
        np.random.seed(seed)
        a = crop(fast(dict(img_path=path)))
        np.random.seed(seed)
        b = crop(slow(dict(img_path=path)))
        for key in ('crop_boxes', 'flips'):
            np.testing.assert_array_equal(a[key], b[key])
        assert a['crop_source_shape'] == b['crop_source_shape']
        assert a['img_shape'] == b['img_shape'] == (224, 224)
        for va, vb in zip(a['img'], b['img']):
            np.testing.assert_array_equal(va, vb)


def _authors_colour(pil, order, factors, grey, blur, solarize):
    """Their colour steps for given draws, with torchvision's functions
    (ColorJitter's adjustments in ``order``, RandomGrayscale, their
    GaussianBlur and Solarize)."""
    adjust = (TF.adjust_brightness, TF.adjust_contrast, TF.adjust_saturation,
              TF.adjust_hue)
    for i in order:
        pil = adjust[i](pil, factors[i])
    if grey:
        pil = TF.rgb_to_grayscale(pil, num_output_channels=3)
    if blur:
        pil = pil.filter(ImageFilter.GaussianBlur(radius=blur))
    if solarize:
        pil = ImageOps.solarize(pil)
    return np.asarray(pil)


def test_colour_chain_within_tolerance_for_the_same_draws(jpegs):
    """A view's colour steps as the pipeline's transforms compute them
    (FastColorJitter.apply, FastRandomGrayscale, FastGaussianBlur, mmpretrain's
    Solarize) for fixed draws, against the authors'."""
    load, crop = _pipeline()[:2]
    rng = np.random.default_rng(0)
    gray = TRANSFORMS.build(dict(type='FastRandomGrayscale', prob=1.0))
    solar = TRANSFORMS.build(dict(type='Solarize', thr=128, prob=1.0))
    fractions = []
    for seed in range(6):
        for path in jpegs:
            np.random.seed(seed)
            view = crop(load(dict(img_path=path)))['img'][0]
            order = rng.permutation(4)
            factors = (rng.uniform(0.6, 1.4), rng.uniform(0.6, 1.4),
                       rng.uniform(0.8, 1.2), rng.uniform(-0.1, 0.1))
            grey, solarize = rng.random() < 0.3, rng.random() < 0.3
            blur = float(rng.uniform(0.1, 2.0))
            ours = FastColorJitter.apply(view, order, *factors)
            if grey:
                ours = gray(dict(img=ours))['img']
            blur_t = TRANSFORMS.build(
                dict(type='FastGaussianBlur', sigma=(blur, blur), prob=1.0))
            ours = blur_t(dict(img=ours))['img']
            if solarize:
                ours = solar(dict(img=ours))['img']
            ref = _authors_colour(
                Image.fromarray(view[..., ::-1].copy()), order, factors, grey,
                blur, solarize)
            d = np.abs(ours[..., ::-1].astype(int) - ref)
            # hue's rounding (pillow_colour) passes through the blur
            assert d.max() <= 8 and d.mean() <= 0.05
            fractions.append((d > 0).mean())
    assert max(fractions) <= 0.03 and np.mean(fractions) <= 0.01


def test_draw_distributions_are_the_authors():
    """The ranges and probabilities of their ColorJitter(0.4, 0.4, 0.2,
    0.1), RandomGrayscale(0.2) and GaussianBlur([.1, 2.])."""
    cfg = Config.fromfile(CONFIG)
    jitter = TRANSFORMS.build(cfg.colour_jitter.transforms[0])
    assert tuple(jitter.brightness) == pytest.approx((0.6, 1.4))
    assert tuple(jitter.contrast) == pytest.approx((0.6, 1.4))
    assert tuple(jitter.saturation) == pytest.approx((0.8, 1.2))
    assert tuple(jitter.hue) == pytest.approx((-0.1, 0.1))
    assert cfg.colour_jitter.prob == 0.8
    np.random.seed(0)
    grey = TRANSFORMS.build(cfg.grayscale)
    img = np.random.randint(0, 256, (8, 8, 3), np.uint8)
    hits = [
        not np.array_equal(grey(dict(img=img))['img'], img)
        for _ in range(4000)
    ]
    assert np.mean(hits) == pytest.approx(0.2, abs=0.02)
    blur_a, blur_b = (TRANSFORMS.build(p[-1] if i == 0 else p[2])
                      for i, p in enumerate((cfg.view_a_pipeline,
                                             cfg.view_b_pipeline)))
    assert (blur_a.prob, blur_b.prob) == (1.0, 0.1)
    assert blur_a.sigma == blur_b.sigma == (0.1, 2.0)
    assert cfg.view_b_pipeline[3] == dict(type='Solarize', thr=128, prob=0.2)


def test_config_pipeline_end_to_end(jpegs):
    np.random.seed(0)
    for path in jpegs:
        res = dict(img_path=path)
        for t in _pipeline():
            res = t(res)
        views = res['inputs']
        assert len(views) == 2
        assert all(tuple(v.shape) == (3, 224, 224) for v in views)
        sample = res['data_samples']
        assert sample.crop_boxes.shape == (2, 4)
        assert sample.flips.shape == (2, )
        assert sample.mask.sum() == 118


def test_geometry_on_a_coordinate_image_through_pillow():
    """Each view's content matches its recorded box and flip (as the contract
    check, on the Pillow path)."""
    H, W, size = 180, 240, 32
    yy, xx = np.mgrid[0:H, 0:W]
    rgb = np.stack(
        [xx * 255 // (W - 1), yy * 255 // (H - 1),
         np.full_like(xx, 128)], -1).astype(np.uint8)
    t = TRANSFORMS.build(
        dict(
            type='TwoViewRandomResizedCrop',
            size=size,
            scale=(0.2, 1.0),
            backend='pillow'))
    np.random.seed(0)
    worst = 0.
    for _ in range(30):
        res = t(dict(img=Image.fromarray(rgb)))
        for k in range(2):
            view = res['img'][k][..., ::-1].astype(float)  # BGR -> RGB
            top, left, h, w = res['crop_boxes'][k]
            for py in (8, 16, 24):
                for px in (8, 16, 24):
                    fx = (px + .5) / size
                    fx = 1 - fx if res['flips'][k] else fx
                    ex = (left + fx * w - .5) * 255 / (W - 1)
                    ey = (top + (py + .5) / size * h - .5) * 255 / (H - 1)
                    worst = max(worst, abs(view[py, px, 0] - ex),
                                abs(view[py, px, 1] - ey))
    assert worst <= 6


def test_pillow_input_needs_the_pillow_backend():
    t = TRANSFORMS.build(dict(type='TwoViewRandomResizedCrop', size=8))
    with pytest.raises(ValueError, match="backend='pillow'"):
        t(dict(img=Image.new('RGB', (16, 16))))
