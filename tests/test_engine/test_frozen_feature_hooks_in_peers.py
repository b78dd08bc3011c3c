"""The online kNN and linear-probe hooks on each mmpretrain self-supervised
algorithm docs/mixing.md names (MAE, SimMIM, MoCo-v3, SimSiam, BYOL, BEiT),
tiny, one iteration on real Fashion-MNIST images through mmengine's Runner:

the logged kNN equals the kNN of features computed by hand with the
algorithm's own whole-image path (``extract_feat``), and a backbone that
would score noise or fail is refused before the first step.
"""
import os

import pytest
import torch
from mmengine.config import Config
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.hooks import OnlineKNNHook
from mmsiameseim.evaluation import (set_training_precision,
                                    weighted_knn_accuracy)
from mmsiameseim.evaluation.frozen_features import whole_image_kwargs
from tests.helpers import ROOT, logged

DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
PRETRAIN = os.path.join(ROOT, 'configs', 'pretrain')
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')

LOADER = dict(
    batch_size=16,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'))
PIPELINE = [
    dict(type='Pad', size=(32, 32), pad_val=0),
    dict(type='PackInputs')
]


def _labelled(test_mode, n):
    return dict(
        LOADER,
        dataset=dict(
            type='LocalFashionMNIST',
            data_prefix=DATA + '/',
            test_mode=test_mode,
            indices=n,
            pipeline=PIPELINE))


def knn_hook(**options):
    return dict(
        dict(
            type='OnlineKNNHook',
            interval=1,
            k=5,
            bank_dataloader=_labelled(False, 48),
            query_dataloader=_labelled(True, 24)), **options)


def linear_hook(**options):
    return dict(
        dict(
            type='OnlineLinearProbeHook',
            val_interval=1,
            train_dataloader=_labelled(False, 32),
            val_dataloader=_labelled(True, 16)), **options)


def _shrink(cfg, work_dir):
    cfg.work_dir = str(work_dir)
    cfg.resume = False
    loader = cfg.train_dataloader
    loader.dataset.data_prefix = DATA + '/'
    loader.dataset.indices = 8
    loader.batch_size = 8
    loader.num_workers = 0
    loader.persistent_workers = False
    cfg.train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=1)
    cfg.param_scheduler = []
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=0)
    cfg.default_hooks.logger = dict(type='LoggerHook', interval=1)
    cfg.log_level = 'WARNING'
    set_training_precision(cfg, 'float32')
    return cfg


def _catalogue(path):

    def make(work_dir):
        return _shrink(Config.fromfile(os.path.join(PRETRAIN, path)), work_dir)

    return make


def _mmpretrain(name, work_dir):
    """A child of mmpretrain's own config ``name`` (its ``mmpretrain::``
    base), as a user writes one."""
    os.makedirs(work_dir, exist_ok=True)
    path = os.path.join(work_dir, 'child.py')
    with open(path, 'w') as f:
        f.write(f"_base_ = 'mmpretrain::{name}'\n")
    cfg = Config.fromfile(path)
    # mmengine's Runner: the workaround docs/mixing.md gives
    cfg.train_dataloader.collate_fn = dict(type='default_collate')
    return cfg


def _simsiam(work_dir):
    """mmpretrain's own SimSiam config, a one-channel ResNet-18 on 32 px."""
    cfg = _mmpretrain('simsiam/simsiam_resnet50_8xb32-coslr-100e_in1k.py',
                      work_dir)
    cfg.model.backbone.update(
        depth=18, in_channels=1, zero_init_residual=False)
    cfg.model.neck.update(in_channels=512, hid_channels=64, out_channels=64)
    cfg.model.head.predictor.update(
        in_channels=64, hid_channels=16, out_channels=64)
    cfg.data_preprocessor = dict(
        type='SelfSupDataPreprocessor', mean=[72.94], std=[90.02])
    view = [
        dict(type='RandomResizedCrop', scale=32, backend='pillow'),
        dict(type='RandomFlip', prob=0.5),
    ]
    cfg.train_dataloader.dataset = dict(
        type='LocalFashionMNIST',
        test_mode=False,
        pipeline=[
            dict(type='Pad', size=(32, 32), pad_val=0),
            dict(type='MultiView', num_views=2, transforms=[view]),
            dict(type='PackInputs')
        ])
    cfg.optim_wrapper = dict(
        type='OptimWrapper', optimizer=dict(type='SGD', lr=0.05))
    cfg.custom_hooks = []
    return _shrink(cfg, work_dir)


def _beit(work_dir):
    """mmpretrain's own BEiT config: a 2-block ViT on 32 px and a small
    DALL-E tokenizer (random weights: it only gives the targets)."""
    cfg = _mmpretrain('beit/beit_beit-base-p16_8xb256-amp-coslr-300e_in1k.py',
                      work_dir)
    cfg.model.backbone.update(
        arch=dict(
            embed_dims=64, num_layers=2, num_heads=2,
            feedforward_channels=128),
        img_size=32,
        patch_size=4,
        drop_path_rate=0.)
    cfg.model.head.update(embed_dims=64, num_embed=64)
    cfg.model.target_generator = dict(
        type='DALL-E', n_hid=8, n_blk_per_group=1, vocab_size=64)
    cfg.data_preprocessor.update(to_rgb=False)
    cfg.train_dataloader.dataset = dict(
        type='LocalFashionMNIST',
        test_mode=False,
        pipeline=[
            dict(type='Pad', size=(32, 32), pad_val=0),
            dict(
                type='RandomResizedCropAndInterpolationWithTwoPic',
                size=32,
                second_size=64,  # DALL-E: 8 x 8 tokens
                interpolation='bicubic',
                second_interpolation='lanczos',
                scale=(0.2, 1.0)),
            dict(
                type='BEiTMaskGenerator',
                input_size=(8, 8),
                num_masking_patches=24,
                min_num_patches=4),
            dict(type='PackInputs')
        ])
    cfg.optim_wrapper = dict(
        type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-4))
    cfg.custom_hooks = []
    return _shrink(cfg, work_dir)


ALGORITHMS = {
    'MAE':
    _catalogue('peers/mae_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'),
    'MoCoV3':
    _catalogue('peers/mocov3_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'),
    'SimMIM':
    _catalogue('mix/simmim-blockwise_swin-tiny-p4_1xb64-bf16-coslr-1e_'
               'fashionmnist.py'),
    'BYOL':
    _catalogue('mix/byol-unigrad_vit-tiny-p4_1xb64-bf16-coslr-1e_'
               'fashionmnist.py'),
    'SimSiam':
    _simsiam,
    'BEiT':
    _beit,
}
# BEiT's TwoNormDataPreprocessor prepares two images per sample: the hooks
# get a plain one with its first normalisation
HOOK_OPTIONS = dict(
    BEiT=dict(
        data_preprocessor=dict(
            type='SelfSupDataPreprocessor',
            mean=[123.675, 116.28, 103.53],
            std=[58.395, 57.12, 57.375],
            to_rgb=False)))


def _pool_by_hand(out):
    """The hooks' features, written out: the last output; a map averaged
    over space, a token sequence's cls token, a cls token as it is."""
    out = out[-1] if isinstance(out, (tuple, list)) else out
    if out.dim() == 4:
        out = out.mean((2, 3))
    elif out.dim() == 3:
        out = out[:, 0]
    return out.float()


def _knn_by_hand(model, hook):
    """The kNN of features from the algorithm's own ``extract_feat`` (the
    whole-image path its authors wrote: MAE's and SimMIM's call the backbone
    with ``mask=None``)."""
    model.eval()
    feats = {}
    with torch.no_grad():
        for name in ('bank', 'query'):
            xs, ys = [], []
            for batch in hook.loaders[name]:
                data = hook.prepare(model)(batch, False)
                xs.append(_pool_by_hand(model.extract_feat(data['inputs'])))
                ys += [int(s.gt_label) for s in data['data_samples']]
            feats[name] = torch.cat(xs), torch.tensor(ys)
    return weighted_knn_accuracy(
        *feats['bank'],
        *feats['query'],
        k=hook.k,
        temperature=hook.temperature)


@pytest.mark.parametrize('algorithm', sorted(ALGORITHMS))
def test_the_logged_knn_is_that_of_whole_image_features(algorithm, tmp_path):
    cfg = ALGORITHMS[algorithm](tmp_path)
    assert cfg.model.type == algorithm
    options = HOOK_OPTIONS.get(algorithm, {})
    cfg.custom_hooks = [knn_hook(**options), linear_hook(**options)]
    runner = Runner.from_cfg(cfg)
    with logged() as log:
        runner.train()
    assert runner.iter == 1
    hook = next(h for h in runner.hooks if isinstance(h, OnlineKNNHook))
    logged_top1 = runner.message_hub.get_scalar('knn/top1').current()
    by_hand = _knn_by_hand(runner.model, hook)
    assert logged_top1 == pytest.approx(by_hand['top1'], abs=1e-9)
    assert runner.message_hub.get_scalar('knn/top5').current() == \
        pytest.approx(by_hand['top5'], abs=1e-9)
    backbone = type(runner.model.backbone).__name__
    checked = f'the online backbone ({backbone}) encodes whole images'
    assert log.getvalue().count(checked) == 2, log.getvalue()
    assert runner.message_hub.get_scalar('linear/top1') is not None


@pytest.mark.person_matrix(
    'knn_hook', 'mixing',
    "OnlineKNNHook on mmpretrain's MAE scores whole images (MAEViT with "
    'mask=None), not the random shuffle indices it logged before')
def test_mae_is_scored_on_whole_images_not_its_random_mask(tmp_path):
    cfg = ALGORITHMS['MAE'](tmp_path)
    cfg.custom_hooks = [knn_hook()]
    runner = Runner.from_cfg(cfg)
    runner.train()
    hook = next(h for h in runner.hooks if isinstance(h, OnlineKNNHook))
    assert hook.forward_kwargs == dict(mask=None)
    backbone = runner.model.backbone
    backbone.eval()
    batch = next(iter(hook.loaders['query']))
    x = runner.model.data_preprocessor(batch, False)['inputs']
    with torch.no_grad():
        whole = backbone(x, mask=None)[-1][:, 0]
        assert torch.equal(whole, backbone(x, mask=None)[-1][:, 0])
        # what the hooks called before: MAEViT masks 75 % at random and
        # returns (tokens, mask, ids_restore), the last being indices
        masked = backbone(x)
    assert len(masked) == 3 and not masked[-1].is_floating_point()
    # the kNN of whole-image features is well above chance (10 classes)
    assert runner.message_hub.get_scalar('knn/top1').current() > 25


@pytest.mark.person_matrix(
    'knn_hook', 'mixing',
    'a backbone that masks at random (MAEViT with forward_kwargs '
    'mask=True) is refused before the first step, naming it and '
    'forward_kwargs; nothing trained')
def test_a_backbone_that_masks_at_random_is_refused_at_start(tmp_path):
    cfg = ALGORITHMS['MAE'](tmp_path)
    cfg.custom_hooks = [knn_hook(forward_kwargs=dict(mask=True))]
    runner = Runner.from_cfg(cfg)
    with pytest.raises(TypeError, match='MAEViT') as error:
        runner.train()
    # its output's last entry is the shuffle indices: no float feature
    assert 'forward_kwargs' in str(error.value)
    assert runner.iter == 0


def test_a_backbone_that_draws_at_random_in_eval_mode_is_refused(tmp_path):
    cfg = ALGORITHMS['MoCoV3'](tmp_path)
    cfg.custom_hooks = [linear_hook()]
    runner = Runner.from_cfg(cfg)
    backbone = runner.model.backbone
    plain = backbone.forward
    backbone.forward = lambda x: tuple(o + torch.randn_like(o)
                                       for o in plain(x))
    with pytest.raises(ValueError, match='different features') as error:
        runner.train()
    assert 'MoCoV3ViT' in str(error.value)
    assert 'forward_kwargs' in str(error.value)
    assert runner.iter == 0


@pytest.mark.person_matrix(
    'knn_hook', 'mixing',
    "the online hooks on mmpretrain's SimMIM (a backbone that needs a mask) "
    'encode whole images with mask=None; a backbone needing an unknown '
    'argument is refused at start naming it and forward_kwargs')
def test_a_backbone_needing_an_unknown_argument_is_refused(tmp_path):

    class TwoInputs(torch.nn.Module):

        def forward(self, x, views):
            return x

    with pytest.raises(TypeError, match='TwoInputs.forward needs views'):
        whole_image_kwargs(TwoInputs())
    cfg = ALGORITHMS['SimMIM'](tmp_path)
    cfg.custom_hooks = [knn_hook()]
    runner = Runner.from_cfg(cfg)
    backbone = runner.model.backbone
    assert whole_image_kwargs(backbone) == dict(mask=None)
    backbone.forward = TwoInputs().forward
    with pytest.raises(TypeError, match='forward_kwargs'):
        runner.train()
    assert runner.iter == 0


@pytest.mark.person_matrix(
    'knn_hook', 'mixing',
    "the online hooks on mmpretrain's BEiT, whose data preprocessor prepares "
    'two images per sample: refused before the first step naming the '
    "hook's data_preprocessor option")
def test_a_two_view_data_preprocessor_is_named(tmp_path):
    cfg = ALGORITHMS['BEiT'](tmp_path)
    cfg.custom_hooks = [knn_hook()]
    runner = Runner.from_cfg(cfg)
    with pytest.raises(TypeError, match="set the hook's data_preprocessor"):
        runner.train()
    assert runner.iter == 0
