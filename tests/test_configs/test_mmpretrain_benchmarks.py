"""The ImageNet-protocol configs: the paper's numbers, and each one run end
to end (2 training iterations + evaluation, or a test) on the smoke data
with the overrides a user would pass through --cfg-options."""
import math
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.runner import Runner

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
CFG_DIR = osp.join(ROOT, 'configs', 'benchmarks', 'mmpretrain')
FT = 'vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py'
LIN = 'vit-base-p16_siameseim-pre_8xb2048-linear-coslr-90e_in1k.py'
ROBUST = {
    v: f'vit-base-p16_siameseim-ft_in1k-test_imagenet-{v}.py'
    for v in ('a', 'r', 'sketch', 'c')
}
TINY = dict(embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)
SIZES = {224: 32, 256: 36}  # 224-px protocol -> 32-px smoke images


def load(name):
    return Config.fromfile(osp.join(CFG_DIR, name))


def types(pipeline):
    return {t['type']: t for t in pipeline}


def test_finetune_config_has_the_appendix_numbers():
    cfg = load(FT)
    assert cfg.custom_imports == dict(
        imports=['mmsiameseim'], allow_failed_imports=False)
    b = cfg.model.backbone
    assert (b.type, b.arch, b.patch_size, b.img_size) == ('VisionTransformer',
                                                          'base', 16, 224)
    assert b.drop_path_rate == 0.1
    assert b.init_cfg == dict(
        type='Pretrained',
        _scope_='mmsiameseim',
        checkpoint='',
        prefix='backbone.')
    assert cfg.model.head.num_classes == 1000
    assert cfg.model.head.loss == dict(
        type='LabelSmoothLoss', label_smooth_val=0.1, mode='original')
    assert cfg.model.train_cfg.augments == [
        dict(type='Mixup', alpha=0.8),
        dict(type='CutMix', alpha=1.0)
    ]
    opt = cfg.optim_wrapper.optimizer
    assert (opt.type, opt.lr, opt.betas,
            opt.weight_decay) == ('AdamW', 1e-3, (0.9, 0.999), 0.05)
    assert cfg.optim_wrapper.constructor == \
        'LearningRateDecayOptimWrapperConstructor'
    assert cfg.optim_wrapper.paramwise_cfg.layer_decay_rate == 0.65
    warmup, cosine = cfg.param_scheduler
    assert (warmup.type, warmup.begin, warmup.end) == ('LinearLR', 0, 5)
    assert (cosine.type, cosine.begin, cosine.end) == ('CosineAnnealingLR', 5,
                                                       100)
    assert cfg.train_cfg.max_epochs == 100
    # 8 x 128 = 1024, the batch lr 1e-3 is given for
    assert cfg.train_dataloader.batch_size * 8 == 1024
    assert cfg.auto_scale_lr.base_batch_size == 1024
    pipe = types(cfg.train_dataloader.dataset.pipeline)
    ra = pipe['RandAugment']
    assert (ra.magnitude_level, ra.magnitude_std) == (9, 0.5)
    assert pipe['RandomErasing'].erase_prob == 0.25
    assert pipe['RandomResizedCrop'].scale == 224
    assert cfg.train_dataloader.dataset.data_root == 'data/imagenet'


def test_linear_probe_config_has_the_appendix_numbers():
    cfg = load(LIN)
    b = cfg.model.backbone
    assert (b.arch, b.patch_size, b.frozen_stages) == ('base', 16, 12)
    assert b.init_cfg.prefix == 'backbone.'
    assert cfg.model.neck == dict(
        type='ClsBatchNormNeck', input_features=768, affine=False)
    assert cfg.model.head.type == 'LinearClsHead'
    opt = cfg.optim_wrapper.optimizer
    assert (opt.type, opt.lr, opt.weight_decay) == ('LARS', 3.2, 0.0)
    warmup, cosine = cfg.param_scheduler
    assert (warmup.begin, warmup.end) == (0, 10)
    assert (cosine.type, cosine.begin, cosine.end) == ('CosineAnnealingLR', 10,
                                                       90)
    assert cfg.train_cfg.max_epochs == 90
    assert cfg.train_dataloader.batch_size * 8 == 16384
    assert cfg.auto_scale_lr.base_batch_size == 16384
    assert set(types(cfg.train_dataloader.dataset.pipeline)) == {
        'StrictLoadImageFromFile', 'RandomResizedCrop', 'RandomFlip',
        'PackInputs'
    }


@pytest.mark.parametrize('name', [
    FT, LIN, 'vit-base-p16_siameseim-pre_1percent-logreg_in1k.py',
    'vit-tiny-p4_linear-probe-10e_fashionmnist.py'
])
def test_every_config_refuses_a_resnet18_checkpoint(name, tmp_path):
    """The configs' Pretrained is mmsiameseim's strict one: a ResNet-18
    stops the run (mmengine's own loads nothing and trains from random
    weights)."""
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS

    from tests.helpers import save_resnet18_checkpoint
    cfg = load(name)
    init = cfg.model.backbone.init_cfg
    assert (init.type, init._scope_,
            init.prefix) == ('Pretrained', 'mmsiameseim', 'backbone.')
    path = tmp_path / 'resnet18.pth'
    save_resnet18_checkpoint(path)
    backbone = cfg.model.backbone
    backbone.init_cfg.checkpoint = str(path)
    if backbone.arch == 'base':  # the same code path, on a small ViT
        backbone.update(arch=TINY, img_size=32)
        if backbone.get('frozen_stages'):
            backbone.frozen_stages = TINY['num_layers']
    init_default_scope('mmpretrain')
    model = MODELS.build(backbone)
    with pytest.raises(
            ValueError,
            match=f"{path} \\(prefix 'backbone.'\\)"
            ': refusing to initialise VisionTransformer.*'
            'supplies 0 of the .*backbone.layer1 \\(24\\)'):
        model.init_weights()


def test_robustness_configs_test_the_finetuned_model():
    for variant, name in ROBUST.items():
        cfg = load(name)
        assert cfg.model.backbone.drop_path_rate == 0.1  # the FT model
        assert cfg.model.head.num_classes == 1000
        ds = cfg.test_dataloader.dataset
        assert ds.class_map_ann_file == 'data/imagenet/meta/train.txt'
        assert ds.data_root == {
            'a': 'data/imagenet-a',
            'r': 'data/imagenet-r',
            'sketch': 'data/imagenet-sketch/sketch',
            'c': 'data/imagenet-c'
        }[variant]
    assert load(ROBUST['a']).test_evaluator.type == 'ClassSubsetAccuracy'
    assert load(ROBUST['r']).test_evaluator.type == 'ClassSubsetAccuracy'
    assert load(ROBUST['sketch']).test_evaluator.type == 'Accuracy'
    c = load(ROBUST['c'])
    assert c.test_evaluator.type == 'ImageNetCorruptionError'
    assert len(c.test_evaluator.alexnet_errors) == 15
    assert c.test_evaluator.alexnet_errors['gaussian_noise'] == 0.886428


def test_full_size_models_and_optimizers_build():
    """ViT-B/16 as configured: layer-wise decay 0.65 over 12 blocks, no decay
    on norms/biases/embeddings; the linear probe trains the head only."""
    from mmengine.optim import build_optim_wrapper
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    init_default_scope('mmpretrain')
    cfg = load(FT)
    model = MODELS.build(cfg.model)
    groups = {
        g['param_name']: g
        for g in build_optim_wrapper(model,
                                     cfg.optim_wrapper).optimizer.param_groups
    }
    assert len(model.backbone.layers) == 12
    scale = {n: g['lr_scale'] for n, g in groups.items()}
    assert scale['backbone.patch_embed.projection.weight'] == \
        pytest.approx(0.65**13)
    assert scale['backbone.layers.0.attn.qkv.weight'] == \
        pytest.approx(0.65**12)
    assert scale['backbone.layers.11.attn.qkv.weight'] == pytest.approx(0.65)
    assert scale['head.fc.weight'] == 1.0
    for name in ('backbone.cls_token', 'backbone.pos_embed',
                 'backbone.layers.3.ln1.weight', 'backbone.ln2.weight',
                 'backbone.layers.3.attn.qkv.bias', 'head.fc.bias'):
        assert groups[name]['weight_decay'] == 0.0, name
    assert groups['backbone.layers.3.attn.qkv.weight']['weight_decay'] == \
        0.05
    drop = [
        m.drop_prob for m in model.backbone.modules()
        if type(m).__name__ == 'DropPath'
    ]
    assert max(drop) == pytest.approx(0.1)  # linearly up to 0.1

    cfg = load(LIN)
    model = MODELS.build(cfg.model)
    model.train()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {'head.fc.weight', 'head.fc.bias'}
    # mmpretrain's ViT returns to train mode with the model; with no dropout
    # or drop path the frozen features are then the eval-mode features
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        train_feat = model.backbone(x)[0]
        model.eval()
        torch.testing.assert_close(model.backbone(x)[0], train_feat)
    optim = build_optim_wrapper(model, cfg.optim_wrapper).optimizer
    assert type(optim).__name__ == 'LARS'


# ---------------------------------------------------------------- end to end
def shrink(cfg, smoke, work_dir, test_batch=10):
    """The --cfg-options a user would pass for a 32-px, 10-class CPU run."""
    cfg.work_dir = str(work_dir)
    b = cfg.model.backbone
    b.update(arch=TINY, img_size=32, patch_size=8)
    if b.get('frozen_stages', -1) > 0:
        b.frozen_stages = TINY['num_layers']
    cfg.model.data_preprocessor.num_classes = 10
    cfg.model.head.update(num_classes=10, in_channels=TINY['embed_dims'])
    if cfg.model.get('neck'):
        cfg.model.neck.input_features = TINY['embed_dims']
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(key)
        if loader is None:
            continue
        loader.update(
            batch_size=4 if key == 'train_dataloader' else test_batch,
            num_workers=0,
            persistent_workers=False)
        ds = loader.dataset
        for field in ('data_root', 'class_map_ann_file'):
            if field in ds:
                ds[field] = ds[field].replace('data/', f'{smoke}/', 1)
        for t in ds.pipeline:
            for field in ('scale', 'crop_size'):
                if t.get(field) in SIZES:
                    t[field] = SIZES[t[field]]
    cfg.default_hooks.logger.interval = 1
    cfg.env_cfg.dist_cfg = dict(backend='gloo')
    return cfg


def shrink_for_training(cfg, smoke, work_dir, checkpoint):
    shrink(cfg, smoke, work_dir)
    cfg.model.backbone.init_cfg.checkpoint = str(checkpoint)
    cfg.train_dataloader.dataset.indices = 8  # 2 iterations of 4
    cfg.train_cfg.update(max_epochs=1, val_interval=1)
    return cfg


def save_tiny_pretraining(path):
    """A tiny SiameseIM saved the way mmengine's Runner saves it."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    from tests.helpers import tiny_siameseim_cfg
    torch.manual_seed(0)
    model = MODELS.build(
        tiny_siameseim_cfg(img_size=32, patch_size=8, dims=TINY['embed_dims']))
    torch.save({'meta': {}, 'state_dict': model.state_dict()}, path)
    return path


@pytest.fixture(scope='module')
def pretrain_ckpt(tmp_path_factory):
    return save_tiny_pretraining(
        tmp_path_factory.mktemp('pretrain') / 'epoch_1.pth')


def backbone_state(pretrain_ckpt):
    sd = torch.load(pretrain_ckpt, weights_only=True)['state_dict']
    return {
        k[len('backbone.'):]: v
        for k, v in sd.items() if k.startswith('backbone.')
    }


def assert_finetuned_from(runner, checkpoint, atol):
    """The backbone starts from ``checkpoint`` (within ``atol`` after the
    steps taken) and layer-wise lr decay reached the optimizer: 4 depths
    (embed, 2 blocks, head) of base lr x 0.65^k."""
    ours = runner.model.backbone.state_dict()
    for k, v in backbone_state(checkpoint).items():
        torch.testing.assert_close(ours[k], v, atol=atol, rtol=0)
    scales = {
        round(g['lr_scale'], 6)
        for g in runner.optim_wrapper.optimizer.param_groups
    }
    assert scales == {round(0.65**k, 6) for k in range(4)}


def assert_linear_probe_of(runner, checkpoint):
    """Frozen backbone: exactly ``checkpoint``'s weights after training;
    only the linear head trains, after a BatchNorm without affine."""
    ours = runner.model.backbone.state_dict()
    for k, v in backbone_state(checkpoint).items():
        torch.testing.assert_close(ours[k], v, atol=0, rtol=0)
    trainable = {
        n
        for n, p in runner.model.named_parameters() if p.requires_grad
    }
    assert trainable == {'head.fc.weight', 'head.fc.bias'}
    assert not runner.model.neck.bn.affine


def assert_percent(metrics, key):
    assert key in metrics, sorted(metrics)
    assert math.isfinite(metrics[key]) and 0 <= metrics[key] <= 100, \
        (key, metrics[key])


@pytest.fixture(scope='module')
def finetuned(smoke_imagenet, pretrain_ckpt, tmp_path_factory):
    work_dir = tmp_path_factory.mktemp('ft')
    cfg = shrink_for_training(
        load(FT), smoke_imagenet, work_dir, pretrain_ckpt)
    runner = Runner.from_cfg(cfg)
    runner.train()
    return runner, work_dir


def test_finetune_runs_end_to_end(finetuned, pretrain_ckpt):
    runner, work_dir = finetuned
    assert runner.iter == 2
    metrics = runner.message_hub.get_scalar('val/accuracy/top1').current()
    assert 0 <= metrics <= 100
    # the pretrained weights were loaded (warm-up lr ~1e-7 barely moves them)
    assert_finetuned_from(runner, pretrain_ckpt, atol=1e-4)
    assert (work_dir / 'epoch_1.pth').is_file()


def test_linear_probe_runs_end_to_end(smoke_imagenet, pretrain_ckpt, tmp_path):
    cfg = shrink_for_training(
        load(LIN), smoke_imagenet, tmp_path, pretrain_ckpt)
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 2
    top1 = runner.message_hub.get_scalar('val/accuracy/top1').current()
    assert 0 <= top1 <= 100
    assert_linear_probe_of(runner, pretrain_ckpt)


def _test(variant, smoke, finetuned, tmp_path):
    _, ft_dir = finetuned
    # ImageNet-C: 15 corruptions x 5 severities x 10 images
    cfg = shrink(
        load(ROBUST[variant]),
        smoke,
        tmp_path,
        test_batch=75 if variant == 'c' else 10)
    cfg.load_from = str(ft_dir / 'epoch_1.pth')
    return Runner.from_cfg(cfg).test()


@pytest.mark.parametrize('variant,num_classes', [('a', 6), ('r', 7)])
def test_imagenet_a_r_restrict_to_their_classes(variant, num_classes,
                                                smoke_imagenet, finetuned,
                                                tmp_path):
    metrics = _test(variant, smoke_imagenet, finetuned, tmp_path)
    print(variant, metrics)
    assert_percent(metrics, 'subset_accuracy/top1')
    # derived from the folders written by the smoke tool
    assert metrics['subset_accuracy/num_classes'] == num_classes


def test_imagenet_sketch(smoke_imagenet, finetuned, tmp_path):
    metrics = _test('sketch', smoke_imagenet, finetuned, tmp_path)
    print('sketch', metrics)
    assert_percent(metrics, 'accuracy/top1')


def test_imagenet_c_reports_one_minus_mce(smoke_imagenet, finetuned, tmp_path):
    metrics = _test('c', smoke_imagenet, finetuned, tmp_path)
    print('c', {k: round(v, 2) for k, v in metrics.items()})
    assert_percent(metrics, 'imagenet_c/top1')
    for c in load(ROBUST['c']).test_evaluator.alexnet_errors:
        assert math.isfinite(metrics[f'imagenet_c/CE/{c}'])
        assert_percent(metrics, f'imagenet_c/error/{c}')
    assert metrics['imagenet_c/1-mCE'] == pytest.approx(
        100 - metrics['imagenet_c/mCE'])
