"""The linear probe trained on cached frozen features: both flips of each
training image are cached and drawn, the config's schedule is followed,
settings it cannot reproduce are refused by name, and its accuracy
matches the Runner's probe on the same checkpoint and images."""
import copy
import os.path as osp

import numpy as np
import pytest
import torch

import mmsiameseim  # noqa: F401
from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                    linear_probe_accuracy, probe_config)
from mmsiameseim.evaluation.cached_linear_probe import (
    cached_linear_probe_accuracy, check_cached_probe_config,
    extract_probe_views, probe_view_pipelines, train_probe_on_features)
from tests.helpers import ROOT

PROBE = osp.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                 'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
DATA = osp.join(ROOT, 'data', 'fashion_mnist')
needs_data = pytest.mark.skipif(
    not osp.isfile(osp.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _cfg():
    return probe_config(PROBE)


def test_the_two_views_are_the_pipeline_without_and_with_its_flip():
    pipelines, prob = probe_view_pipelines(_cfg())
    assert prob == 0.5
    plain, flipped = pipelines
    assert [t['type'] for t in plain] == ['Pad', 'PackInputs']
    assert [t['type'] for t in flipped] == ['Pad', 'RandomFlip', 'PackInputs']
    assert flipped[1]['prob'] == 1.0
    assert flipped[1]['direction'] == 'horizontal'
    cfg = _cfg()
    cfg.train_dataloader.dataset.pipeline = cfg.test_pipeline
    assert probe_view_pipelines(cfg) == ([list(cfg.test_pipeline)], 0.0)


@needs_data
def test_both_flips_are_cached_as_the_backbone_encodes_them():
    cfg = _cfg()
    torch.manual_seed(0)
    model = build_frozen_backbone_model(cfg, None)
    (plain, labels), (flipped,
                      labels2) = extract_probe_views(model, cfg, [3, 5, 8])[0]
    assert torch.equal(labels, labels2)
    # the padded image flipped by hand, through the same backbone
    from mmpretrain.registry import DATASETS
    ds = DATASETS.build(dict(cfg.train_dataloader.dataset, pipeline=[]))
    imgs = np.stack([ds.get_data_info(i)['img'] for i in (3, 5, 8)])
    x = torch.zeros(3, 1, 32, 32)
    x[:, 0, :28, :28] = torch.from_numpy(imgs).float()
    x = (x - 72.94) / 90.02
    with torch.no_grad():
        want = model.backbone(x)[-1], model.backbone(x.flip(-1))[-1]
    torch.testing.assert_close(plain, want[0], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(flipped, want[1], atol=1e-4, rtol=1e-4)
    assert (plain - flipped).abs().max() > 1e-2  # the views differ


def _record_neck_inputs(monkeypatch):
    from mmpretrain.models.necks import ClsBatchNormNeck
    seen = []
    forward = ClsBatchNormNeck.forward

    def record(self, inputs):
        if self.training:
            seen.append(inputs[0].detach().clone())
        return forward(self, inputs)

    monkeypatch.setattr(ClsBatchNormNeck, 'forward', record)
    return seen


@pytest.mark.parametrize('flip_prob', [0.5, 0.0, 1.0])
def test_each_epoch_draws_one_view_per_image(monkeypatch, flip_prob):
    """Feature 0 names the view, feature 1 the image: every image is seen
    once per epoch, in its flipped view with the flip's probability."""
    n, epochs = 600, 2
    views = [torch.randn(n, 128) for _ in range(2)]
    for v, view in enumerate(views):
        view[:, 0] = v
        view[:, 1] = torch.arange(n)
    labels = torch.arange(n) % 10
    seen = _record_neck_inputs(monkeypatch)
    train_probe_on_features(
        _cfg(),
        views,
        labels,
        views[0][:50],
        labels[:50],
        flip_prob,
        epochs=epochs)
    batches = torch.cat(seen)
    assert [len(b) for b in seen[:3]] == [256, 256, 88]  # the config's
    assert len(batches) == n * epochs
    for epoch in batches.split(n):
        assert sorted(epoch[:, 1].long().tolist()) == list(range(n))
    flipped = batches[:, 0].mean().item()
    assert abs(flipped - flip_prob) < 0.05  # 1200 draws: sd 0.014


def test_the_schedule_and_optimizer_are_the_configs(monkeypatch):
    """SGD at lr 0.5 and momentum 0.9, cosine to 0 over the iterations."""
    from mmengine.optim import OptimWrapper
    lrs, kinds = [], set()
    step = OptimWrapper.update_params

    def record(self, loss, *args, **kwargs):
        lrs.append(self.get_lr()['lr'][0])
        kinds.add((type(self.optimizer).__name__,
                   self.optimizer.param_groups[0]['momentum']))
        return step(self, loss, *args, **kwargs)

    monkeypatch.setattr(OptimWrapper, 'update_params', record)
    n = 512  # two iterations per epoch
    feats = torch.randn(n, 128)
    labels = torch.arange(n) % 10
    train_probe_on_features(_cfg(), [feats], labels, feats, labels, epochs=2)
    want = [0.5 * (1 + np.cos(np.pi * i / 4)) / 2 for i in range(4)]
    np.testing.assert_allclose(lrs, want, rtol=1e-6)
    assert kinds == {('SGD', 0.9)}


def _with(cfg, key, value):
    cfg = copy.deepcopy(cfg)
    node = cfg
    *path, last = key.split('.')
    for part in path:
        node = node[int(part)] if part.isdigit() else node[part]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return cfg


REFUSED = [
    ('train_dataloader.dataset.pipeline.1',
     dict(type='RandomResizedCrop', scale=32),
     r'train_dataloader\.dataset\.pipeline\[1\]\.type=.RandomResizedCrop'),
    ('train_dataloader.dataset.pipeline.1',
     dict(
         type='RandomFlip',
         prob=[0.3, 0.3],
         direction=['horizontal', 'vertical']),
     r'train_dataloader\.dataset\.pipeline\[1\]: RandomFlip'),
    ('model.neck', dict(type='LinearNeck', in_channels=128,
                        out_channels=128), r'model\.neck\.type'),
    ('model.train_cfg', dict(augments=dict(type='Mixup', alpha=0.8)),
     r'model\.train_cfg\.augments'),
    ('auto_scale_lr', dict(base_batch_size=256,
                           enable=True), r'auto_scale_lr\.enable'),
    ('custom_hooks', [dict(type='EMAHook')], r'custom_hooks'),
    ('train_cfg', dict(type='IterBasedTrainLoop', max_iters=10), r'train_cfg'),
    ('train_dataloader.sampler', dict(type='RepeatAugSampler'),
     r'train_dataloader\.sampler\.type'),
]


@pytest.mark.parametrize('key,value,message', REFUSED)
def test_settings_it_cannot_reproduce_are_refused_by_name(key, value, message):
    cfg = _with(_cfg(), key, value)
    with pytest.raises(ValueError, match=message):
        check_cached_probe_config(cfg)
    with pytest.raises(ValueError, match=message):
        train_probe_on_features(cfg, [torch.randn(8, 128)],
                                torch.zeros(8).long(), torch.randn(4, 128),
                                torch.zeros(4).long())


def test_a_backbone_that_would_train_is_refused():
    cfg = _with(_cfg(), 'model.backbone.frozen_stages', 2)
    with pytest.raises(ValueError, match=r'model\.backbone\.frozen_stages'):
        train_probe_on_features(cfg, [torch.randn(8, 128)],
                                torch.zeros(8).long(), torch.randn(4, 128),
                                torch.zeros(4).long())


# Measured on this budget (500 training images, 300 test images, 2 epochs,
# fp32, the fixed random backbone below), seeds 0-4: the Runner's probe
# 26.9 +- 2.0 % (sd), the cached probe 28.8 +- 3.4 % (Welch: the gap is
# 1.1 standard errors). With three seeds a side the gap of the means has
# an sd of about sqrt((2.0**2 + 3.4**2) / 3) = 2.3: the tolerance is three
# of them. (At 2000 / 1000 images and 3 epochs, seeds 0-3: 44.6 +- 1.5
# against 44.1 +- 1.4.)
TOLERANCE = 7.0


@needs_data
@pytest.mark.slow
def test_the_cached_probe_scores_as_the_runners(tmp_path):
    cfg = _cfg()
    torch.manual_seed(123)
    model = build_frozen_backbone_model(cfg, None)
    checkpoint = str(tmp_path / 'backbone.pth')
    torch.save({'state_dict': model.state_dict()}, checkpoint)
    train = np.sort(np.random.default_rng(0).choice(60000, 500, False))
    test = np.arange(300)
    cached = [
        cached_linear_probe_accuracy(
            cfg,
            checkpoint,
            train,
            test,
            epochs=2,
            seed=seed,
            cache_dir=str(tmp_path / 'cache')) for seed in (0, 1, 2)
    ]
    runner = [
        linear_probe_accuracy(
            cfg,
            checkpoint,
            str(tmp_path / f'runner{seed}'),
            train,
            test,
            epochs=2,
            seed=seed) for seed in (0, 1, 2)
    ]
    assert abs(np.mean(cached) - np.mean(runner)) < TOLERANCE, (cached, runner)
    assert len(list((tmp_path / 'cache').iterdir())) == 3  # 2 views, test
