"""The efficient target option: view b at a lower resolution, the predictor
predicting that grid."""
import os

import numpy as np
import torch
from mmengine.config import Config
from mmengine.dataset import default_collate
from mmpretrain.registry import MODELS, TRANSFORMS

import mmsiameseim  # noqa: F401

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CFG = os.path.join(ROOT, 'configs', 'pretrain', '{}')


def test_fashionmnist_config_trains_a_step_on_a_4x4_target_grid():
    from mmengine.registry import init_default_scope
    init_default_scope('mmpretrain')
    name = 'siameseim-target16_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'
    cfg = Config.fromfile(CFG.format(name))
    default = Config.fromfile(
        CFG.format(
            'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'))
    # only the target resolution differs from the demo config
    assert cfg.model.neck.pop('target_grid_size') == 4
    assert cfg.model == default.model
    np.random.seed(0)
    torch.manual_seed(0)
    pipeline = [
        TRANSFORMS.build(t) for t in cfg.train_dataloader.dataset.pipeline
    ]
    samples = []
    for _ in range(3):
        results = dict(img=np.random.randint(0, 256, (28, 28), np.uint8))
        for t in pipeline:
            results = t(results)
        samples.append(results)
    cfg.model.neck.target_grid_size = 4
    model = MODELS.build(cfg.model)
    model.init_weights()
    data = model.data_preprocessor(default_collate(samples), training=True)
    view_a, view_b = data['inputs']
    assert view_a.shape[-2:] == (32, 32) and view_b.shape[-2:] == (16, 16)
    target = model.target.module['backbone'](view_b)
    assert target.shape[1] == 1 + 16
    loss = model(**data, mode='loss')['loss']
    assert torch.isfinite(loss)
    loss.backward()


def test_imagenet_config_encodes_a_112px_target():
    cfg = Config.fromfile(
        CFG.format(
            'siameseim-target112_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py')
    )
    assert cfg.model.neck.target_grid_size == 7
    crop = cfg.train_dataloader.dataset.pipeline[1]
    assert crop.type == 'TwoViewRandomResizedCrop'
    assert crop.size == 224 and crop.target_size == 112
    assert cfg.train_cfg.max_epochs == 1600


def test_backbone_resizes_its_position_table_for_another_grid():
    from mmpretrain.models.utils import resize_pos_embed
    vit = MODELS.build(
        dict(
            type='SiameseIMViT',
            arch=dict(
                embed_dims=32,
                num_layers=1,
                num_heads=2,
                feedforward_channels=64),
            img_size=32,
            patch_size=8))
    vit.init_weights()
    vit.eval()
    x = torch.randn(2, 3, 16, 16)
    out = vit(x)
    assert out.shape == (2, 1 + 4, 32)
    # the same as encoding with the resized table by hand
    pos = resize_pos_embed(
        vit.pos_embed, (4, 4), (2, 2), mode='bicubic', num_extra_tokens=1)
    tokens = vit.patch_embed(x)[0] + pos[:, 1:]
    cls = vit.cls_token.expand(2, -1, -1) + pos[:, :1]
    ref = vit.layers[0](torch.cat([cls, tokens], 1))
    torch.testing.assert_close(out, vit.ln1(ref) if vit.final_norm else ref)
