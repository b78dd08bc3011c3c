"""The mix catalogue (configs/pretrain/mix/): each config trains a few
iterations on real Fashion-MNIST images through mmengine's Runner, and the
demo's evaluation gets a frozen backbone that loads its checkpoint."""
import glob
import os

import pytest
import torch
from mmengine.config import Config

from mmsiameseim.evaluation import (native_bf16, probe_config,
                                    set_training_precision)

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIX = os.path.join(ROOT, 'configs', 'pretrain', 'mix')
PROBE_CFG = os.path.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                         'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
CONFIGS = sorted(
    os.path.basename(p)[:-3] for p in glob.glob(os.path.join(MIX, '*.py')))
needs_data = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')

# (algorithm, backbone, head or target) each catalogue entry must keep
EXPECTED = {
    'mocov3-unigrad': ('MoCoV3', 'MoCoV3ViT', 'UniGradHead'),
    'byol-unigrad': ('BYOL', 'VisionTransformer', 'UniGradHead'),
    'simmim-blockwise': ('SimMIM', 'SimMIMSwinTransformer', 'SimMIMHead'),
    'siameseim_vit-small': ('SiameseIM', 'SiameseIMViT', 'UniGradHead'),
    'siameseim_vit-large': ('SiameseIM', 'SiameseIMViT', 'UniGradHead'),
    'siameseim-pixel': ('SiameseIM', 'SiameseIMViT', 'UniGradHead'),
}


def _entry(name):
    return next(k for k in EXPECTED if name.startswith(k))


def test_catalogue_has_every_required_combination():
    assert sorted(_entry(n) for n in CONFIGS) == sorted(EXPECTED)
    archs = {
        _entry(n):
        Config.fromfile(os.path.join(MIX,
                                     n + '.py')).model.backbone.get('arch')
        for n in CONFIGS
    }
    assert archs['siameseim_vit-small'] == 'deit-s'
    assert archs['siameseim_vit-large'] == 'l'
    assert Config.fromfile(
        os.path.join(
            MIX,
            next(n for n in CONFIGS if n.startswith('siameseim-pixel')) +
            '.py')).model.target_type == 'pixel'


def _smoke_cfg(name, work_dir, images=16, batch=8):
    cfg = Config.fromfile(os.path.join(MIX, name + '.py'))
    cfg.work_dir = str(work_dir)
    cfg.resume = False
    loader = cfg.train_dataloader
    loader.dataset.data_prefix = DATA + '/'
    loader.dataset.indices = images
    loader.batch_size = batch
    loader.num_workers = 0
    loader.persistent_workers = False
    cfg.param_scheduler = [
        dict(
            type='CosineAnnealingLR',
            T_max=1,
            by_epoch=True,
            begin=0,
            end=1,
            convert_to_iter_based=True)
    ]
    cfg.default_hooks.logger.interval = 1
    if not native_bf16():
        set_training_precision(cfg, 'float32')
    return cfg


@needs_data
@pytest.mark.parametrize('name', CONFIGS)
def test_mix_config_trains_on_fashion_mnist(name, tmp_path):
    from mmengine.runner import Runner
    algorithm, backbone, last = EXPECTED[_entry(name)]
    cfg = _smoke_cfg(name, tmp_path)
    if _entry(name) == 'siameseim_vit-large':
        # ViT-L's width, heads and MLP with 2 of its 24 blocks keep this
        # test fast; the full depth is test_vit_large_trains_at_full_depth
        from mmpretrain.models import VisionTransformer
        cfg.model.backbone.arch = dict(
            VisionTransformer.arch_zoo['l'], num_layers=2)
    assert cfg.model.type == algorithm
    assert cfg.model.backbone.type == backbone
    assert last in (cfg.model.head.type, cfg.model.get('target_type'))
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 2
    losses = [v for v in runner.message_hub.log_scalars['train/loss'].data[0]]
    assert len(losses) == 2 and all(
        map(lambda v: v == v and abs(v) < 1e6, losses))
    # the demo's frozen evaluation loads this backbone, key for key
    _check_probe_loads(name, os.path.join(str(tmp_path), 'epoch_1.pth'), cfg)


def _check_probe_loads(name, checkpoint, pretrain_cfg):
    from mmengine.dataset import pseudo_collate
    from mmpretrain.registry import DATASETS

    from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                        extract_features)
    probe = probe_config(PROBE_CFG, pretrain_cfg.model)
    state = torch.load(
        checkpoint, map_location='cpu', weights_only=False)['state_dict']
    model = build_frozen_backbone_model(probe, checkpoint)
    for key, value in model.backbone.state_dict().items():
        if 'relative_position_index' in key:
            continue
        torch.testing.assert_close(
            value, state['backbone.' + key].float(), msg=key)
    # the demo's kNN / few-shot features and linear-probe input: one
    # vector per image of the head's width
    test = probe.test_dataloader.dataset
    test.data_prefix = DATA + '/'
    feats, _ = extract_features(model, test, test.pipeline, [0, 1])
    assert feats.shape == (2, probe.model.head.in_channels)
    data = model.data_preprocessor(
        pseudo_collate(
            [DATASETS.build(dict(test, indices=2))[i] for i in range(2)]),
        False)
    with torch.no_grad():
        neck = model.extract_feat(data['inputs'], stage='neck')
    assert neck[-1].shape == feats.shape


@needs_data
@pytest.mark.slow
def test_vit_large_trains_at_full_depth(tmp_path):
    from mmengine.runner import Runner
    name = next(n for n in CONFIGS if n.startswith('siameseim_vit-large'))
    cfg = _smoke_cfg(name, tmp_path, images=8, batch=4)
    runner = Runner.from_cfg(cfg)
    assert len(runner.model.backbone.layers) == 24
    runner.train()
    assert runner.iter == 2
