# The tiny SiameseIM of the CPU tests (tests.helpers.tiny_siameseim_cfg):
# the ViT-B/16 model of configs/pretrain/_base_/siameseim_vit-base-p16.py
# shrunk to a 32-wide, 2-block, 2-head ViT on 32x32 RGB images with 8x8
# patches (a 4x4 patch grid) and a 1-block projector and predictor; no
# init_cfg (the modules' own initialisation).
_base_ = ['../../../configs/pretrain/_base_/siameseim_vit-base-p16.py']

img_size = 32
patch_size = 8
patch_grid = img_size // patch_size
embed_dims = 32
in_channels = 3

model = dict(
    data_preprocessor=dict(
        mean=[127.5] * in_channels, std=[127.5] * in_channels, to_rgb=False),
    backbone=dict(
        arch=dict(_delete_=True, embed_dims=embed_dims, num_layers=2,
                  num_heads=2, feedforward_channels=embed_dims * 2),
        img_size=img_size,
        patch_size=patch_size,
        in_channels=in_channels),
    neck=dict(
        in_channels=embed_dims,
        embed_dims=embed_dims,
        grid_size=patch_grid,
        projector_depth=1,
        predictor_depth=1,
        num_heads=2),
    init_cfg=None)
