"""The full-size ADE20k config holds the paper's hyper-parameters
(appendix, "Hyper-parameters for ADE20k semantic segmentation")."""
import os

import pytest
from mmengine import Config

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(
    ROOT, 'configs', 'benchmarks', 'mmseg',
    'upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_ade20k-512x512.py')


@pytest.fixture(scope='module')
def cfg():
    return Config.fromfile(CONFIG)


def test_backbone_is_vit_base_16_with_relative_positions(cfg):
    assert cfg.custom_imports == dict(
        imports=['mmsiameseim.seg'], allow_failed_imports=False)
    backbone = cfg.model.backbone
    assert backbone.type == 'SiameseIMMAE'  # mmseg MAE: relative pos. bias
    assert (backbone.num_layers, backbone.embed_dims, backbone.num_heads,
            backbone.mlp_ratio, backbone.patch_size) == (12, 768, 12, 4, 16)
    assert backbone.img_size == (512, 512)
    assert backbone.drop_path_rate == 0.1
    assert backbone.norm_cfg == dict(type='LN', eps=1e-6)
    assert backbone.init_cfg == dict(
        type='Pretrained', checkpoint='', prefix='backbone.')
    assert cfg.model.decode_head.type == 'UPerHead'
    assert cfg.model.decode_head.num_classes == 150
    assert cfg.model.auxiliary_head.num_classes == 150


def test_data_is_ade20k_512_crops_with_the_papers_augmentation(cfg):
    assert cfg.train_dataloader.dataset.type == 'ADE20KDataset'
    assert cfg.train_dataloader.dataset.data_root == \
        'data/ade/ADEChallengeData2016'
    steps = {t.type: t for t in cfg.train_dataloader.dataset.pipeline}
    assert steps['RandomCrop'].crop_size == (512, 512)
    assert {'RandomFlip', 'PhotoMetricDistortion'} <= set(steps)
    assert cfg.model.data_preprocessor.size == (512, 512)


def test_schedule_batch_optimizer_and_sliding_test(cfg):
    # Batch 16 = 8 GPUs x 2 (the file name's 8xb2).
    assert cfg.train_dataloader.batch_size * 8 == 16
    assert cfg.train_cfg.type == 'IterBasedTrainLoop'
    assert cfg.train_cfg.max_iters == 160000
    wrapper = cfg.optim_wrapper
    assert wrapper.type == 'AmpOptimWrapper'
    assert wrapper.optimizer == dict(
        type='AdamW', lr=1e-4, betas=(0.9, 0.999), weight_decay=0.05)
    assert wrapper.constructor == 'LayerDecayOptimizerConstructor'
    assert wrapper.paramwise_cfg == dict(num_layers=12, layer_decay_rate=0.65)
    warmup, decay = cfg.param_scheduler
    assert (warmup.type, warmup.by_epoch, warmup.begin, warmup.end) == \
        ('LinearLR', False, 0, 1500)
    # Linear decay: polynomial of power 1 to 0 at the last iteration.
    assert (decay.type, decay.power, decay.eta_min, decay.by_epoch,
            decay.begin, decay.end) == ('PolyLR', 1.0, 0.0, False, 1500,
                                        160000)
    assert cfg.model.test_cfg == dict(
        mode='slide', crop_size=(512, 512), stride=(341, 341))


@pytest.mark.slow
def test_full_size_model_loads_a_vit_b_siameseim_checkpoint(cfg, tmp_path):
    """The real geometry: a ViT-B/16 SiameseIM (224 px, 14x14 grid) into
    the 512 px UperNet (32x32 grid). About 30 s on 2 cores; several GB."""
    import torch
    from mmpretrain.registry import MODELS as PRETRAIN_MODELS
    from mmseg.registry import MODELS
    from mmseg.utils import register_all_modules

    import mmsiameseim  # noqa: F401
    pretrain = Config.fromfile(
        os.path.join(ROOT, 'configs', 'pretrain',
                     'siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py'))
    siameseim = PRETRAIN_MODELS.build(pretrain.model)
    siameseim.init_weights()
    state = siameseim.state_dict()
    del siameseim
    torch.save({'meta': {}, 'state_dict': state}, tmp_path / 'vit-b.pth')

    register_all_modules()
    model_cfg = cfg.model.copy()
    model_cfg.backbone.init_cfg.checkpoint = str(tmp_path / 'vit-b.pth')
    backbone = MODELS.build(model_cfg.backbone)
    backbone.init_weights()
    loaded = backbone.state_dict()
    for key in ('layers.11.attn.qkv.weight', 'layers.5.ffn.layers.1.bias',
                'cls_token', 'patch_embed.projection.weight'):
        assert torch.equal(loaded[key], state['backbone.' + key]), key
    assert backbone.pos_embed.shape == (1, 32 * 32 + 1, 768)
    backbone.eval()
    with torch.no_grad():
        features = backbone(torch.randn(1, 3, 512, 512))
    assert [f.shape for f in features] == [(1, 768, 32, 32)] * 4
