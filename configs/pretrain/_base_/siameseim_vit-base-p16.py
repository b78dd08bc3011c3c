# SiameseIM with a ViT-B/16 encoder (DESIGN: 2-block projector, 4-block
# predictor, 16 decoder heads as in the released weights, BatchNorm over
# tokens in fp32, UniGrad loss with lambda 0.02).

# The patch grid of view a: the crop size, the mask generator's grid and the
# neck's grid all come from these (the two-view pipeline of
# imagenet_two_view_masked.py reads them).
img_size = 224
patch_size = 16
patch_grid = img_size // patch_size  # 14 x 14 patches

model = dict(
    type='SiameseIM',
    base_momentum=0.005,  # mmpretrain convention: 1 - 0.995
    end_momentum=0.,
    data_preprocessor=dict(
        type='EagerSelfSupDataPreprocessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        to_rgb=True),
    backbone=dict(
        type='SiameseIMViT',
        arch='b',
        img_size=img_size,
        patch_size=patch_size,
        train_patch_embed=False),
    neck=dict(
        type='RelPosDecoderNeck',
        in_channels=768,
        embed_dims=768,
        grid_size=patch_grid,
        projector_depth=2,
        predictor_depth=4,
        num_heads=16,
        mlp_ratio=4.,
        norm_cfg=dict(type='TokenBN', sync=True)),
    head=dict(
        type='UniGradHead',
        loss=dict(type='UniGradLoss', lambda_neg=0.02,
                  target_norm='mae-like')),
    init_cfg=[
        dict(type='Xavier', distribution='uniform', layer='Linear'),
        dict(type='Constant', layer='LayerNorm', val=1.0, bias=0.0)
    ])
