"""SiameseIM with mmpretrain's ViT family (one training step per arch) and
build-time refusal of backbones and necks that do not fit."""
import copy
import re

import pytest
import torch
from mmengine.optim import OptimWrapper
from mmpretrain.models import VisionTransformer
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401
from tests.helpers import random_batch, tiny_siameseim_cfg

# Each arch keeps its width, heads and MLP width (and DINOv2 its layer scale
# and SwiGLU MLP); one block and a 2x2 patch grid keep the step small.
FAMILIES = {
    's': {},
    'b': {},
    'l': {},
    'h': {},
    'eva-g': {},
    'deit-t': {},
    'deit-s': {},
    'deit-b': {},
    'dinov2-s':
    dict(layer_scale_init_value=1e-5),
    'dinov2-g':
    dict(
        layer_scale_init_value=1e-5, layer_cfgs=dict(ffn_type='swiglu_fused')),
}


def _cfg(arch, **backbone_options):
    cfg = tiny_siameseim_cfg(img_size=32, patch_size=16, dims=32)
    arch = dict(VisionTransformer.arch_zoo[arch], num_layers=1)
    cfg['backbone'].update(arch=arch, drop_path_rate=0.1, **backbone_options)
    cfg['neck'].update(in_channels=arch['embed_dims'])
    return cfg


@pytest.mark.parametrize('arch', sorted(FAMILIES))
def test_one_training_step_with_each_vit_family(arch):
    torch.manual_seed(0)
    model = MODELS.build(_cfg(arch, **FAMILIES[arch]))
    model.init_weights()
    model.train()
    optim = OptimWrapper(
        torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                          lr=1e-3))
    views, samples = random_batch(4, img_size=32, grid=2, num_mask=2)
    qkv = model.backbone.layers[0].attn.qkv.weight
    before = qkv.detach().clone()
    log = model.train_step(dict(inputs=views, data_samples=samples), optim)
    assert torch.isfinite(log['loss'])
    assert not torch.equal(qkv, before)


def _build(**changes):
    cfg = tiny_siameseim_cfg()
    for key, value in changes.items():
        cfg[key] = value
    return MODELS.build(cfg)


TINY = dict(embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)


@pytest.mark.parametrize('backbone,hint', [
    (dict(
        type='VisionTransformer',
        arch=TINY,
        img_size=32,
        patch_size=8,
        out_type='raw'), "type='SiameseIMViT'"),
    (dict(type='MAEViT', arch=TINY, img_size=32,
          patch_size=8), 'accepts_patch_mask'),
    (dict(type='SwinTransformer', arch='tiny',
          img_size=32), 'forward\\(x, mask\\)'),
])
def test_backbones_without_the_interface_are_refused_at_build(backbone, hint):
    with pytest.raises(TypeError) as err:
        _build(backbone=backbone)
    msg = str(err.value)
    assert f"backbone {backbone['type']} does not implement the SiameseIM " \
        'encoder interface' in msg
    assert re.search(hint, msg)


def test_neck_that_does_not_match_the_backbone_is_refused_at_build():
    cfg = tiny_siameseim_cfg()
    cfg['neck']['in_channels'] = 48
    with pytest.raises(
            ValueError,
            match='in_channels=48 but backbone '
            'SiameseIMViT gives embed_dims=32'):
        MODELS.build(cfg)
    cfg = tiny_siameseim_cfg()
    cfg['neck']['grid_size'] = 8
    with pytest.raises(
            ValueError,
            match='grid_size=8 but backbone '
            'SiameseIMViT has a 4x4 patch grid'):
        MODELS.build(cfg)
    cfg = tiny_siameseim_cfg()
    cfg['target_type'] = 'pixel'
    with pytest.raises(
            ValueError,
            match=r'pixel patch \(patch_size\*\*2 \* '
            r'in_channels\) has 192; set neck.out_channels=192'):
        MODELS.build(cfg)
    cfg['neck']['out_channels'] = 8 * 8 * 3
    MODELS.build(copy.deepcopy(cfg))


def test_neck_of_another_algorithm_is_refused_at_build():
    neck = dict(
        type='MAEPretrainDecoder',
        num_patches=16,
        patch_size=8,
        embed_dim=32,
        decoder_embed_dim=32,
        decoder_depth=1,
        decoder_num_heads=2)
    with pytest.raises(
            TypeError, match='neck MAEPretrainDecoder lacks '
            'projector'):
        _build(neck=neck)
