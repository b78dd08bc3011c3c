"""Shared pieces of the mmdet-side tests."""
import os

import torch

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO_PRETRAIN_CFG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def tiny_vit(**overrides):
    """A ViTDetViT: 32 wide, 4 blocks, patch 4, windows of 4, global 1, 3."""
    import mmsiameseim.det  # noqa: F401
    from mmsiameseim.det.backbones import ViTDetViT
    cfg = dict(
        arch=dict(
            embed_dims=32, num_layers=4, num_heads=4, feedforward_channels=64),
        img_size=64,
        patch_size=4,
        pretrain_img_size=32,
        window_size=4,
        global_attn_indexes=(1, 3),
        drop_path_rate=0.)
    cfg.update(overrides)
    return ViTDetViT(**cfg)


def save_demo_pretrain_checkpoint(path):
    """Save a freshly built SiameseIM of the Fashion-MNIST demo config
    (128 wide, 4 blocks, patch 4, 32 x 32, 1 channel) the way mmengine's
    Runner does: {'meta': ..., 'state_dict': ...}."""
    from mmengine.config import Config
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    cfg = Config.fromfile(DEMO_PRETRAIN_CFG)
    model = MODELS.build(dict(cfg.model, _scope_='mmpretrain'))
    torch.save({'meta': {'epoch': 1}, 'state_dict': model.state_dict()}, path)
    return model
