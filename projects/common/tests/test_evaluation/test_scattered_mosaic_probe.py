"""The scattered-mosaic dense probe: its mosaics and per-pixel labels, the
boundary IoU, the low-shot fit, and the probe end to end on a random ViT
and real Fashion-MNIST images."""
import json
import os

import numpy as np
import pytest
import torch
from mmengine.config import Config

from projects.common.evaluation import (FrozenBackboneProtocol,
                                        MosaicDenseProbe, ScatteredMosaicProbe,
                                        boundary_iou, build_dense_probe,
                                        inner_boundary, make_scattered_mosaics)
from tests.helpers import ROOT

DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
needs_data = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _two_items():
    # item 0 (class 3): bright below row 10; item 1 (class 7): bright right
    # of column 14, with one dark pixel (10 < threshold 32) on item 0
    images = np.zeros((2, 28, 28), np.uint8)
    images[0, 10:] = 100
    images[1, :, 14:] = 200
    images[1, 20, 2] = 10
    return images, np.array([3, 7])


def test_labels_follow_bright_pixels_occlusion_and_background():
    images, labels = _two_items()
    # scale 1 on a 28 px canvas: both items at (0, 0), the second on top
    mosaics, pixels, sources = make_scattered_mosaics(
        images, labels, 1, seed=0, canvas=28, items=2, scale=(1, 1))
    bottom, top = sources[0]
    assert sorted(sources[0]) == [0, 1]
    m, p = mosaics[0], pixels[0]
    # pixels of the top item: its value and class, over the other's
    top_bright = images[top] >= 32
    assert (m[top_bright] == images[top][top_bright]).all()
    assert (p[top_bright] == labels[top]).all()
    # the bottom item shows where the top one is dark (its dark pixel too)
    shown = (images[bottom] >= 32) & ~top_bright
    assert shown.any() and (p[shown] == labels[bottom]).all()
    assert (m[shown] == images[bottom][shown]).all()
    # no bright pixel of either: background (class 10), value 0
    neither = (images.max(0) < 32)
    assert neither.any() and (p[neither] == 10).all() and (m[neither]
                                                           == 0).all()


def test_scattered_items_keep_labels_on_bright_pixels_only():
    rng = np.random.default_rng(0)
    images = (rng.random((12, 28, 28)) * 255).astype(np.uint8)
    images[:, :, :8] = 0
    labels = np.arange(12) % 10
    mosaics, pixels, sources = make_scattered_mosaics(
        images, labels, 3, seed=5, canvas=48, items=4, scale=(0.75, 1.5))
    assert mosaics.shape == pixels.shape == (3, 48, 48)
    assert sorted(sources.ravel()) == list(range(12))  # each image once
    item = pixels < 10
    assert (mosaics[item] >= 32).all() and (mosaics[~item] == 0).all()
    for n in range(3):
        assert set(np.unique(pixels[n][item[n]])) <= set(labels[sources[n]])


def test_mosaics_are_deterministic_in_their_seed():
    rng = np.random.default_rng(1)
    images = (rng.random((8, 28, 28)) * 255).astype(np.uint8)
    labels = np.arange(8)
    a = make_scattered_mosaics(images, labels, 2, seed=3)
    b = make_scattered_mosaics(images, labels, 2, seed=3)
    c = make_scattered_mosaics(images, labels, 2, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_mosaics_refuse_too_few_images_and_items_larger_than_the_canvas():
    images, labels = np.zeros((7, 28, 28), np.uint8), np.zeros(7, int)
    with pytest.raises(ValueError, match='need 8 images, 7 given'):
        make_scattered_mosaics(images, labels, 2, items=4)
    with pytest.raises(ValueError, match='items of at most 42 px'):
        make_scattered_mosaics(images, labels, 1, canvas=32, items=1)


def _reference_band(mask, d):
    # a mask pixel within Chebyshev distance d of a pixel outside it (or
    # of the outside of the image)
    h, w = mask.shape
    out = np.zeros_like(mask)
    for y, x in zip(*np.nonzero(mask)):
        for dy in range(-d, d + 1):
            for dx in range(-d, d + 1):
                yy, xx = y + dy, x + dx
                if not (0 <= yy < h and 0 <= xx < w) or not mask[yy, xx]:
                    out[y, x] = True
    return out


def test_inner_boundary_is_the_ring_within_d_of_the_contour():
    mask = np.zeros((10, 10), bool)
    mask[2:8, 2:8] = True
    band = inner_boundary(torch.from_numpy(mask)[None, None], 1)[0, 0]
    assert int(band.sum()) == 36 - 16  # the 6 x 6 square's outer ring
    band2 = inner_boundary(torch.from_numpy(mask)[None, None], 2)[0, 0]
    assert int(band2.sum()) == 36 - 4
    # the image border is a contour too; the reference agrees everywhere
    rng = np.random.default_rng(0)
    for d in (1, 2):
        m = rng.random((12, 12)) > 0.4
        got = inner_boundary(torch.from_numpy(m)[None, None], d)[0, 0]
        assert np.array_equal(got.numpy(), _reference_band(m, d))


def test_boundary_iou_of_hand_made_masks():
    target = np.ones((1, 10, 10), int)
    target[0, 2:8, 2:8] = 0
    assert boundary_iou(target, target, 2, d=1)['boundary_iou'] == 100
    # shifted by one column: class 0's rings share 10 of 30 pixels
    pred = np.ones_like(target)
    pred[0, 2:8, 3:9] = 0
    g = _reference_band(target[0] == 0, 1)
    p = _reference_band(pred[0] == 0, 1)
    expected = 100 * (g & p).sum() / (g | p).sum()
    assert (g & p).sum() == 10 and (g | p).sum() == 30
    got = boundary_iou(pred, target, 2, d=1)
    assert got['boundary_ious'][0] == pytest.approx(expected)
    # a class in neither map is left out of the mean
    assert boundary_iou(pred, target, 3, d=1)['boundary_ious'][2] is None


def _protocol(tmp_path, **kwargs):
    smoke = Config.fromfile(
        os.path.join(ROOT, 'projects', 'claim', 'configs',
                     'claim_study_smoke.py'))
    return FrozenBackboneProtocol.from_cfg(
        smoke.evaluation,
        work_dir=str(tmp_path),
        data_prefix=DATA,
        precision='float32',
        **kwargs)


def test_probe_refuses_a_lowshot_larger_than_its_training_mosaics(tmp_path):
    with pytest.raises(
            ValueError, match='lowshot=5, between 1 and '
            'train_mosaics=4'):
        ScatteredMosaicProbe(_protocol(tmp_path), train_mosaics=4, lowshot=5)


@needs_data
def test_a_canvas_off_the_patch_grid_is_refused_before_any_mosaic(tmp_path):
    probe = ScatteredMosaicProbe(
        _protocol(tmp_path),
        train_mosaics=2,
        test_mosaics=2,
        lowshot=1,
        canvas=30)
    with pytest.raises(
            ValueError, match='canvas=30 is not a multiple of '
            'the patch size 4'):
        probe.data()


@needs_data
def test_train_and_test_mosaics_come_from_their_own_images(tmp_path):
    protocol = _protocol(tmp_path, test_samples=None, holdout=200)
    probe = ScatteredMosaicProbe(
        protocol, train_mosaics=20, test_mosaics=10, lowshot=5, items=4)
    d = probe.data()
    subsets = protocol.subsets()
    train_ds, train_idx = d['sources']['train']
    test_ds, test_idx = d['sources']['test']
    assert np.array_equal(train_idx, subsets['probe'])
    assert np.array_equal(test_idx, subsets['test'])
    used_train = set(train_idx[d['train'][4].ravel()].tolist())
    used_test = set(test_idx[d['test'][4].ravel()].tolist())
    assert len(used_train) == 80 and len(used_test) == 40
    assert not used_train & set(subsets['test'].tolist())
    assert not used_test & set(subsets['probe'].tolist())
    # without holdout the test mosaics are of the test set's images
    plain = ScatteredMosaicProbe(
        _protocol(tmp_path / 'plain'),
        train_mosaics=2,
        test_mosaics=2,
        lowshot=1).data()
    assert plain['sources']['test'][0]['test_mode'] is True
    assert plain['sources']['train'][0]['test_mode'] is False


@needs_data
def test_probe_runs_end_to_end_on_a_random_vit(tmp_path, monkeypatch):
    probe = ScatteredMosaicProbe(
        _protocol(tmp_path),
        train_mosaics=4,
        test_mosaics=2,
        lowshot=2,
        max_iter=5)
    fitted = []
    fit = probe.fit

    def counting_fit(features, labels, classes):
        fitted.append(len(features))
        return fit(features, labels, classes)

    monkeypatch.setattr(probe, 'fit', counting_fit)
    d = probe.data()
    # a 64 px canvas: 16 x 16 patches of 4 px for a ViT trained on 32 px
    assert d['train'][0].shape == (4, 1, 64, 64)
    assert d['train'][1].shape == (4, 16, 16) and d['classes'] == 11
    net = probe.backbone(None)
    with torch.no_grad():
        tokens = net(d['test'][0])[-1]
    assert tokens.shape == (2, 1 + 16 * 16, 128)
    result = probe.evaluate('init', None)
    assert fitted == [4, 2]  # all the training mosaics, then the low-shot
    for key in ('miou', 'boundary_iou', 'accuracy', 'lowshot_miou',
                'lowshot_boundary_iou', 'lowshot_accuracy'):
        assert 0 <= result[key] <= 100, key
    assert len(result['iou']) == 11
    stored = json.loads(
        (tmp_path / 'results' / 'init_scattered.json').read_text())
    assert stored['result']['miou'] == result['miou']
    assert stored['settings']['lowshot'] == 2
    raw = probe.raw_pixels()
    assert 0 <= raw['miou'] <= 100
    pred = probe.predict(None)['prediction']
    assert pred.shape == (2, 64, 64)
    assert 'straddle two labels' in probe.describe()[0]


def test_a_study_picks_its_dense_probe_by_type(tmp_path):
    protocol = _protocol(tmp_path)
    probe = build_dense_probe(
        protocol,
        dict(type='ScatteredMosaicProbe', train_mosaics=8, lowshot=4))
    assert type(probe) is ScatteredMosaicProbe and probe.lowshot == 4
    assert type(build_dense_probe(protocol, None)) is MosaicDenseProbe
    with pytest.raises(
            ValueError, match="dense.type='Scattered' is no "
            'dense probe'):
        build_dense_probe(protocol, dict(type='Scattered'))


def test_mosaic_statistics_count_background_and_straddling_patches(
        tmp_path, monkeypatch):
    probe = ScatteredMosaicProbe(
        _protocol(tmp_path), train_mosaics=1, lowshot=1)
    # one 8 x 8 test mosaic of 4 x 4 patches: background (10) on the left
    # half, class 1 on the right half except one class-2 pixel
    pixels = np.full((1, 8, 8), 10)
    pixels[0, :, 4:] = 1
    pixels[0, 5, 6] = 2
    pixels[0, 1, 2] = 3  # item 3 on a background patch
    monkeypatch.setattr(
        probe, 'data',
        lambda: dict(test=(None, None, None, pixels), patch=4, classes=11))
    stats = probe.mosaic_statistics()
    assert stats['background'] == pytest.approx(100 * 31 / 64)
    assert stats['straddling'] == 50  # the two patches with a second label
    assert stats['two_items'] == 25  # only the one with classes 1 and 2
