# SiameseIM on real Fashion-MNIST images, sized for a 2-core CPU.
# 28x28 images padded to 32x32, patch 4 -> 8x8 grid, 38 / 64 patches masked
# (about the 60 % of the paper); a 128-wide, 4-block ViT with a 2-block
# projector and 2-block predictor. See configs/pretrain/README.md.
_base_ = ['_base_/fashionmnist_budget.py']

# the patch grid of view a: the crop size, the mask generator's grid and the
# neck's grid all come from these
img_size = 32
patch_size = 4
patch_grid = img_size // patch_size  # 8 x 8 patches
embed_dims = 128

model = dict(
    type='SiameseIM',
    base_momentum=0.01,
    end_momentum=0.,
    data_preprocessor={{_base_.data_preprocessor}},
    backbone=dict(
        type='SiameseIMViT',
        arch={{_base_.vit_arch}},
        img_size=img_size,
        patch_size=patch_size,
        in_channels=1,
        train_patch_embed=False),
    neck=dict(
        type='RelPosDecoderNeck',
        in_channels=embed_dims,
        embed_dims=embed_dims,
        grid_size=patch_grid,
        projector_depth=2,
        predictor_depth=2,
        num_heads=4,
        norm_cfg=dict(type='TokenBN', sync=True)),
    head=dict(type='UniGradHead',
              loss=dict(type='UniGradLoss', lambda_neg=0.02)),
    init_cfg=[
        dict(type='Xavier', distribution='uniform', layer='Linear'),
        dict(type='Constant', layer='LayerNorm', val=1.0, bias=0.0)
    ])

train_pipeline = [
    dict(type='Pad', size=(img_size, img_size), pad_val=0),
    dict(type='TwoViewRandomResizedCrop', size=img_size, scale=(0.25, 1.0),
         flip_prob=0.5, interpolation='bicubic'),
    dict(type='PerViewTransforms',
         pipelines=[{{_base_.view_a_pipeline}},
                         {{_base_.view_b_pipeline}}]),
    dict(type='BlockwiseMaskGenerator', input_size=patch_grid,
         num_masking_patches=38, min_num_patches=4, fixed_count=True),
    dict(type='PackInputs',
         algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'],
         meta_keys=['ori_shape', 'img_shape']),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
