"""The accelerator option's data preprocessor, on CPU tensors: each colour step
against the CPU pipeline's (Pillow's formulas on arrays), the drawn parameters'
distributions against the CPU pipeline's, and the flips it records."""
import os

import numpy as np
import pytest
import torch
import torchvision.transforms.functional as TF
from mmengine.config import Config
from mmengine.dataset import default_collate
from mmengine.registry import init_default_scope
from mmpretrain.models.utils import SelfSupDataPreprocessor
from mmpretrain.registry import MODELS, TRANSFORMS
from mmpretrain.structures import DataSample
from PIL import Image

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets.transforms import FastColorJitter
from mmsiameseim.datasets.transforms import pillow_colour as pc
from mmsiameseim.models.data_preprocessors import device_colour as dc
from tests.helpers import photo_crops

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim-deviceaug_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py')


def _crops(count, size=64, seed=0):
    """BGR uint8 crops of the real sample photographs."""
    return [
        np.ascontiguousarray(rgb[..., ::-1])
        for rgb in photo_crops(count, size, seed)
    ]


def _to_tensor(bgr_list):
    """(B, 3, H, W) float RGB of BGR arrays."""
    return torch.from_numpy(np.stack(bgr_list)[..., ::-1].copy()).permute(
        0, 3, 1, 2).float()


def _to_bgr(t, i):
    return t[i].permute(1, 2, 0).numpy()[..., ::-1].astype(int)


@pytest.mark.parametrize('name,lo,hi', [('brightness', 0.6, 1.4),
                                        ('contrast', 0.6, 1.4),
                                        ('saturation', 0.8, 1.2)])
def test_enhancements_equal_the_cpu_pipelines(name, lo, hi):
    imgs = _crops(6)
    factors = torch.tensor([lo, hi, 1.0, 0.0, 0.93, 1.17])
    out = getattr(dc, name)(_to_tensor(imgs), factors)
    for i, img in enumerate(imgs):
        expected = getattr(pc, name)(img, float(factors[i]))
        np.testing.assert_array_equal(_to_bgr(out, i), expected)


def test_grayscale_and_solarize_equal_the_cpu_pipelines():
    imgs = _crops(4)
    grey = dc.grayscale(_to_tensor(imgs))
    solar = dc.solarize(_to_tensor(imgs))
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(_to_bgr(grey, i), pc.grayscale(img))
        np.testing.assert_array_equal(
            _to_bgr(solar, i), np.where(img < 128, img, 255 - img))


def test_hue_within_the_cpu_pipelines_tolerance():
    imgs = _crops(8)
    factors = torch.tensor([-0.1, 0.1, 0.0, 0.05, -0.033, 0.077, -0.06, 0.01])
    out = dc.hue(_to_tensor(imgs), factors)
    for i, img in enumerate(imgs):
        # against Pillow (torchvision's PIL adjust_hue), as the CPU path is
        pil = Image.fromarray(img[..., ::-1].copy())
        ref = np.asarray(TF.adjust_hue(pil, float(factors[i])))[..., ::-1]
        d = np.abs(_to_bgr(out, i) - ref)
        assert d.max() <= 8 and (d > 0).mean() <= 0.01


def test_blur_within_the_cpu_pipelines_tolerance():
    imgs = _crops(6)
    sigma = torch.tensor([0.1, 2.0, 0.37, 1.21, 0.8, 1.66])
    out = dc.gaussian_blur(_to_tensor(imgs), sigma)
    for i, img in enumerate(imgs):
        d = np.abs(_to_bgr(out, i) - pc.gaussian_blur(img, float(sigma[i])))
        assert d.max() <= 2 and (d > 0).mean() <= 0.15, float(sigma[i])


def _preprocessor(**kwargs):
    return MODELS.build(dict(type='DeviceAugmentDataPreprocessor', **kwargs))


def test_augment_is_the_cpu_chain_for_the_same_draws():
    """The batched steps for drawn parameters = the CPU pipeline's transforms
    applied to each image with those parameters (hue and blur:

    within their tolerance).
    """
    torch.manual_seed(0)
    pre = _preprocessor()
    imgs = _crops(16, seed=1)
    for view in (0, 1):
        p = pre.draw(view, len(imgs), torch.device('cpu'))
        p['solarize'][:4] = True  # some of each step
        p['grayscale'][4:6] = True
        out = pre.augment(_to_tensor(imgs), p)
        for i, img in enumerate(imgs):
            ref = img[:, ::-1].copy() if p['flip'][i] else img
            if p['jitter'][i]:
                ref = FastColorJitter.apply(
                    ref, p['order'][i].tolist(),
                    *(float(p[k][i]) for k in ('brightness', 'contrast',
                                               'saturation', 'hue')))
            if p['grayscale'][i]:
                ref = pc.grayscale(ref)
            if p['blur'][i]:
                ref = pc.gaussian_blur(ref, float(p['sigma'][i]))
            if p['solarize'][i]:
                ref = np.where(ref < 128, ref, 255 - ref)
            d = np.abs(_to_bgr(out, i) - ref)
            assert d.max() <= 8 and d.mean() <= 0.2, (view, i)


def test_drawn_parameters_follow_the_cpu_pipelines_distributions():
    torch.manual_seed(0)
    pre = _preprocessor()
    n = 20000
    for view, (blur, solar) in enumerate(((1.0, 0.0), (0.1, 0.2))):
        p = pre.draw(view, n, torch.device('cpu'))
        for key, prob in (('flip', 0.5), ('jitter', 0.8), ('grayscale', 0.2),
                          ('blur', blur), ('solarize', solar)):
            assert p[key].float().mean().item() == pytest.approx(
                prob, abs=0.015), (view, key)
        for key, (lo, hi) in (('brightness', (0.6, 1.4)), ('contrast', (0.6,
                                                                        1.4)),
                              ('saturation', (0.8, 1.2)), ('hue', (-0.1, 0.1)),
                              ('sigma', (0.1, 2.0))):
            x = p[key]
            assert lo <= x.min() and x.max() <= hi
            # uniform: mean and variance of U(lo, hi)
            assert x.mean().item() == pytest.approx(
                (lo + hi) / 2, abs=0.01 * (hi - lo))
            assert x.var().item() == pytest.approx((hi - lo)**2 / 12, rel=0.05)
        # a uniformly random order: each step first about 1/4 of the time,
        # each row a permutation
        first = torch.bincount(p['order'][:, 0], minlength=4).float() / n
        assert torch.allclose(first, torch.full((4, ), 0.25), atol=0.015)
        assert (p['order'].sort(1).values == torch.arange(4)).all()


def _batch(imgs, flips):
    samples = []
    for f in flips:
        s = DataSample()
        s.set_field(np.asarray(f, bool), 'flips')
        samples.append(s)
    views = [
        torch.from_numpy(np.stack(imgs)).permute(0, 3, 1, 2).contiguous()
        for _ in range(2)
    ]
    return dict(inputs=views, data_samples=samples)


def test_flips_update_the_recorded_geometry():
    """With colour off, each output view is its input mirrored exactly when the
    preprocessor flipped it, and the recorded flip becomes the xor."""
    torch.manual_seed(0)
    off = dict(
        jitter_prob=0., grayscale_prob=0., blur_prob=0., solarize_prob=0.)
    pre = _preprocessor(view_a=off, view_b=off)
    imgs = _crops(32, size=16, seed=2)
    before = [np.array([i % 2 == 0, i % 3 == 0]) for i in range(32)]
    data = pre(_batch(imgs, [b.copy() for b in before]), training=True)
    std = pre.std.view(1, 3, 1, 1)
    mean = pre.mean.view(1, 3, 1, 1)
    seen = set()
    for v in range(2):
        pixels = torch.round(data['inputs'][v] * std + mean)
        for i, sample in enumerate(data['data_samples']):
            flipped_here = bool(sample.flips[v] != before[i][v])
            seen.add(flipped_here)
            rgb = torch.from_numpy(imgs[i][..., ::-1].copy()).permute(
                2, 0, 1).float()
            expected = rgb.flip(-1) if flipped_here else rgb
            assert torch.equal(pixels[i], expected), (v, i)
    assert seen == {True, False}


def test_outside_training_it_only_normalises():
    pre = _preprocessor()
    plain = SelfSupDataPreprocessor(
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        to_rgb=True)
    batch = _batch(_crops(4, size=16), [[False, True]] * 4)
    out = pre(batch, training=False)
    ref = plain(batch, training=False)
    for a, b in zip(out['inputs'], ref['inputs']):
        assert torch.equal(a, b)
    assert [list(s.flips) for s in out['data_samples']] == \
        [[False, True]] * 4


@pytest.mark.parametrize('kwargs,match', [
    (dict(flip_prob=2.), 'flip_prob'),
    (dict(to_rgb=False), 'to_rgb'),
    (dict(view_a=dict(blur_prob=1.5)), 'view_a.blur_prob'),
    (dict(view_b=dict(blur_sigma=(2., 1.))), 'view_b.blur_sigma'),
    (dict(view_a=dict(colour=1)), 'unknown keys'),
])
def test_bad_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _preprocessor(**kwargs)


def test_the_deviceaug_config_runs_its_pipeline_and_preprocessor(tmp_path):
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(CONFIG)
    default = Config.fromfile(
        CONFIG.replace('siameseim-deviceaug_', 'siameseim_'))
    # only the data preprocessor and the pipeline differ from the default
    assert cfg.model.backbone == default.model.backbone
    assert cfg.model.neck == default.model.neck
    assert cfg.train_cfg == default.train_cfg
    assert cfg.param_scheduler == default.param_scheduler
    steps = cfg.train_dataloader.dataset.pipeline
    assert [s['type'] for s in steps] == [
        'StrictLoadImageFromFile', 'TwoViewRandomResizedCrop',
        'BlockwiseMaskGenerator', 'PackInputs'
    ]
    assert steps[1]['flip_prob'] == 0
    pipeline = [TRANSFORMS.build(s) for s in steps]
    samples = []
    for i, img in enumerate(_crops(3, size=200)):
        path = str(tmp_path / f'{i}.jpg')
        Image.fromarray(img[..., ::-1]).save(path, quality=90)
        res = dict(img_path=path)
        for t in pipeline:
            res = t(res)
        assert not res['data_samples'].flips.any()
        samples.append(res)
    pre = MODELS.build(cfg.model.data_preprocessor)
    torch.manual_seed(0)
    out = pre(default_collate(samples), training=True)
    assert [tuple(v.shape) for v in out['inputs']] == [(3, 3, 224, 224)] * 2
    assert all(torch.isfinite(v).all() for v in out['inputs'])


def test_the_configs_views_are_the_authors_defaults():
    from mmsiameseim.models.data_preprocessors.device_augment import \
        view_settings
    pre = Config.fromfile(CONFIG).model.data_preprocessor
    view_a, view_b = view_settings()
    assert dict(pre.view_a) == view_a and dict(pre.view_b) == view_b
