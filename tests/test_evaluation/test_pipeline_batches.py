"""The frozen-feature extraction's batches: stacked images give the
per-image list's features, and kept batches spare a second model the
pipeline."""
import os

import pytest
import torch
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmpretrain.registry import DATASETS

from mmsiameseim.evaluation import frozen_features
from mmsiameseim.evaluation.frozen_features import (
    batch_features, build_frozen_backbone_model, collate_samples,
    extract_features)
from tests.helpers import ROOT

PROBE = os.path.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                     'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
needs_data = pytest.mark.skipif(
    not os.path.isfile(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _probe():
    cfg = Config.fromfile(PROBE)
    torch.manual_seed(0)
    return cfg, build_frozen_backbone_model(cfg)


@needs_data
@pytest.mark.parametrize('precision', ['float32', 'bfloat16'])
def test_stacked_images_give_the_features_of_the_per_image_list(precision):
    cfg, model = _probe()
    dataset = DATASETS.build(
        dict(cfg.test_dataloader.dataset, serialize_data=False))
    samples = [dataset[i] for i in range(6)]
    stacked = collate_samples(samples)
    assert isinstance(stacked['inputs'], torch.Tensor)
    assert stacked['inputs'].shape == (6, 1, 32, 32)
    listed = pseudo_collate([dataset[i] for i in range(6)])
    assert isinstance(listed['inputs'], list)
    a, la = batch_features(model, stacked, precision=precision)
    b, lb = batch_features(model, listed, precision=precision)
    assert torch.equal(a, b) and torch.equal(la, lb)


def test_images_of_different_shapes_stay_a_list():
    samples = [
        dict(inputs=torch.zeros(1, 4, 4, dtype=torch.uint8)),
        dict(inputs=torch.zeros(1, 4, 6, dtype=torch.uint8))
    ]
    assert isinstance(collate_samples(samples)['inputs'], list)
    same_shape = [
        dict(inputs=torch.zeros(1, 4, 4, dtype=torch.uint8)),
        dict(inputs=torch.zeros(1, 4, 4))
    ]
    assert isinstance(collate_samples(same_shape)['inputs'], list)


@needs_data
def test_kept_batches_run_the_pipeline_once_per_images_and_pipeline(
        monkeypatch):
    cfg, model = _probe()
    built = []
    build = frozen_features.DATASETS.build

    def counting(dataset_cfg):
        built.append(dataset_cfg['pipeline'])
        return build(dataset_cfg)

    monkeypatch.setattr(frozen_features.DATASETS, 'build', counting)
    dataset, pipeline = cfg.test_dataloader.dataset, cfg.test_pipeline
    kept = {}

    def features(indices, pipe=pipeline, store=kept):
        return extract_features(
            model, dataset, pipe, indices, batch_size=4, kept_batches=store)

    first = features([0, 1, 2, 3, 4, 5])
    assert len(built) == 1 and len(kept) == 1
    # the same images and pipeline again: read back, the same features
    again = features([0, 1, 2, 3, 4, 5])
    assert len(built) == 1
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    # other images, or another pipeline, run the pipeline
    features([0, 1, 2])
    flipped = [
        dict(pipeline[0]),
        dict(type='RandomFlip', prob=1.0),
        dict(pipeline[1])
    ]
    features([0, 1, 2, 3, 4, 5], pipe=flipped)
    assert len(built) == 3 and len(kept) == 3
    # nothing kept without the dict
    unkept = features([0, 1, 2, 3, 4, 5], store=None)
    assert len(built) == 4
    assert all(torch.equal(a, b) for a, b in zip(first, unkept))
