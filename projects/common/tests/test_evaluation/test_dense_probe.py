"""The dense probe: mosaics and their labels, the per-patch classifier, the
scores, and the probe of a protocol on real Fashion-MNIST images."""
import json
import os

import numpy as np
import pytest
import torch
from mmengine.config import Config

from projects.common.evaluation import (FrozenBackboneProtocol,
                                        MosaicDenseProbe, dense_probe_scores,
                                        fit_linear_classifier, make_mosaics,
                                        patch_labels, patch_tokens,
                                        raw_patch_pixels, segmentation_scores)
from tests.helpers import ROOT

DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
needs_data = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def test_mosaic_places_each_item_in_its_quadrant_with_its_labels():
    # item i: value 100 + 10 i in its right half, 0 (background) in its left
    images = np.zeros((8, 28, 28), np.uint8)
    for i in range(8):
        images[i, :, 14:] = 100 + 10 * i
    labels = np.arange(8) % 5
    mosaics, pixels = make_mosaics(
        images, labels, count=2, seed=3, num_classes=5)
    assert mosaics.shape == pixels.shape == (2, 32, 32)
    order = np.random.default_rng(3).permutation(8)[:8].reshape(2, 2, 2)
    used = []
    for n in range(2):
        for row in range(2):
            for col in range(2):
                i = order[n, row, col]
                cell = mosaics[n, row * 16:(row + 1) * 16,
                               col * 16:(col + 1) * 16]
                lab = pixels[n, row * 16:(row + 1) * 16,
                             col * 16:(col + 1) * 16]
                # the bright right half keeps its value; the dark left half
                # is background (class num_classes)
                assert (cell[:, 9:] == 100 + 10 * i).all()
                assert (cell[:, :7] == 0).all()
                assert (lab[:, 9:] == labels[i]).all()
                assert (lab[:, :7] == 5).all()
                used.append(i)
    assert sorted(used) == list(range(8))  # every image exactly once


def test_mosaics_refuse_too_few_images_and_bad_labels():
    images = np.zeros((7, 28, 28), np.uint8)
    with pytest.raises(ValueError, match='need 8 images, 7 given'):
        make_mosaics(images, np.zeros(7, int), count=2)
    with pytest.raises(ValueError, match=r'labels outside \[0, 10\)'):
        make_mosaics(images, np.full(7, 10), count=1)


def test_patch_label_is_the_majority_with_ties_to_the_item():
    pixels = np.full((1, 4, 4), 9)  # background 9
    pixels[0, :2, :2] = [[1, 1], [1, 9]]  # 3 of 4: item 1
    pixels[0, :2, 2:] = [[2, 9], [9, 2]]  # 2 of 4: a tie goes to item 2
    pixels[0, 2:, :2] = [[3, 9], [9, 9]]  # 1 of 4: background
    out = patch_labels(pixels, (2, 2), num_labels=10)
    assert out.tolist() == [[[1, 2], [9, 9]]]
    with pytest.raises(ValueError, match='does not divide'):
        patch_labels(pixels, (3, 3), num_labels=10)


def test_segmentation_scores_by_hand():
    target = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 1, 1, 1, 2, 0])
    s = segmentation_scores(pred, target, num_classes=4)
    # IoU: class 0 1/3, class 1 2/3, class 2 1/2; class 3 absent
    assert s['iou'][:3] == pytest.approx([100 / 3, 200 / 3, 50])
    assert s['iou'][3] is None
    assert s['miou'] == pytest.approx((100 / 3 + 200 / 3 + 50) / 3)
    assert s['accuracy'] == pytest.approx(400 / 6)


def test_linear_classifier_separates_separable_patches():
    g = torch.Generator().manual_seed(0)
    centres = torch.randn(3, 8, generator=g) * 5
    y = torch.arange(300) % 3
    x = centres[y] + torch.randn(300, 8, generator=g) * 0.3 + 100  # offset
    clf = fit_linear_classifier(x, y, num_classes=3, max_iter=50)
    assert (clf(x).argmax(-1) == y).float().mean() == 1.0


def test_dense_probe_scores_check_the_feature_grid():
    feats = torch.zeros(2, 4, 4, 3)
    with pytest.raises(ValueError, match='patch for patch'):
        dense_probe_scores(feats, np.zeros((2, 3, 3), int), feats,
                           np.zeros((2, 4, 4), int), 2)


def test_raw_patch_pixels_are_each_patch_block():
    img = torch.arange(2 * 1 * 8 * 8).float().reshape(2, 1, 8, 8)
    out = raw_patch_pixels(img, 4)
    assert out.shape == (2, 2, 2, 16)
    assert torch.equal(out[1, 0, 1], img[1, 0, 0:4, 4:8].reshape(-1))


def test_patch_tokens_drop_the_cls_token_and_keep_the_grid():
    from mmpretrain.models.backbones import VisionTransformer
    vit = VisionTransformer(
        arch=dict(
            embed_dims=16, num_layers=1, num_heads=2, feedforward_channels=32),
        img_size=16,
        patch_size=4,
        in_channels=1,
        out_type='raw')
    vit.eval()  # (VisionTransformer.train returns None)
    x = torch.randn(3, 1, 16, 16)
    out = patch_tokens(vit, x, batch_size=2)
    with torch.no_grad():
        ref = vit(x)[-1]  # mmpretrain backbones give a tuple
    assert out.shape == (3, 4, 4, 16)
    assert torch.allclose(out.reshape(3, 16, 16), ref[:, 1:])


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


@needs_data
def test_probe_of_real_mosaics_stores_and_reuses_its_result(tmp_path):
    probe = MosaicDenseProbe(
        _protocol(tmp_path), train_mosaics=40, test_mosaics=20, max_iter=30)
    d = probe.data()
    x, labels = d['train'][0], d['train'][1]
    assert x.shape == (40, 1, 32, 32) and labels.shape == (40, 8, 8)
    # normalised with the probe config's mean / std; 11 labels
    assert abs(float(x.mean())) < 1.5 and d['classes'] == 11
    assert labels.max() == 10 and (labels == 10).mean() > 0.2
    # the grid probe's splits: four arrays and where their images come from
    assert len(d['train']) == 4 and set(d['sources']) == {'train', 'test'}
    raw = probe.raw_pixels()
    assert 0 < raw['miou'] <= 100 and 0 < raw['accuracy'] <= 100
    init = probe.evaluate('init', None)
    assert 0 < init['miou'] <= 100 and len(init['iou']) == 11
    stored = json.loads((tmp_path / 'results' / 'init_dense.json').read_text())
    assert stored['result']['miou'] == init['miou']
    assert MosaicDenseProbe(
        _protocol(tmp_path), train_mosaics=40, test_mosaics=20,
        max_iter=30).evaluate('init', None) == init
    # other settings are refused, naming the file and the difference
    with pytest.raises(ValueError, match='train_mosaics: 40 there, 30 now'):
        MosaicDenseProbe(
            _protocol(tmp_path),
            train_mosaics=30,
            test_mosaics=20,
            max_iter=30).evaluate('init', None)


@needs_data
def test_probe_with_holdout_uses_training_images_only(tmp_path):
    protocol = _protocol(tmp_path, test_samples=None, holdout=200)
    subsets = protocol.subsets()
    held = set(subsets['test'].tolist())
    assert len(held) == 200
    for split in ('knn', 'probe', 'few'):
        assert not held & set(subsets[split].tolist()), split
    cfg = protocol.config()
    assert protocol.test_dataset(cfg)['test_mode'] is False
    probe = MosaicDenseProbe(
        protocol, train_mosaics=10, test_mosaics=50, max_iter=5)
    assert probe.data()['test'][0].shape[0] == 50
    with pytest.raises(
            ValueError, match='test_mosaics=60: .*need 240 '
            'images, 200 given'):
        MosaicDenseProbe(protocol, train_mosaics=10, test_mosaics=60).data()


def test_mosaic_probe_refuses_bad_counts(tmp_path):
    with pytest.raises(ValueError, match='train_mosaics=0'):
        MosaicDenseProbe(_protocol(tmp_path), train_mosaics=0)
