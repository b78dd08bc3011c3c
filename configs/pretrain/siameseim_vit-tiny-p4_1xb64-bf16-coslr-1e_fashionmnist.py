# SiameseIM on real Fashion-MNIST images, sized for a 2-core CPU.
# 28x28 images padded to 32x32, patch 4 -> 8x8 grid, 38 / 64 patches masked
# (about the 60 % of the paper); a 128-wide, 4-block ViT with a 2-block
# projector and 2-block predictor. See configs/pretrain/README.md.
_base_ = ['_base_/runtime.py']

data_root = 'data/fashion_mnist/'
img_size = 32
patch_size = 4
grid = img_size // patch_size
embed_dims = 128
max_epochs = 1
warmup_epochs = 0.1

model = dict(
    type='SiameseIM',
    base_momentum=0.01,
    end_momentum=0.,
    data_preprocessor=dict(
        type='SelfSupDataPreprocessor', mean=[72.94], std=[90.02]),
    backbone=dict(
        type='SiameseIMViT',
        arch=dict(embed_dims=embed_dims, num_layers=4, num_heads=4,
                  feedforward_channels=embed_dims * 4),
        img_size=img_size,
        patch_size=patch_size,
        in_channels=1,
        train_patch_embed=False),
    neck=dict(
        type='RelPosDecoderNeck',
        in_channels=embed_dims,
        embed_dims=embed_dims,
        grid_size=grid,
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

# Grayscale images: the MoCo-v3 colour set reduces to brightness jitter,
# blur and (view b) solarisation; saturation, hue and grayscale do not apply.
brightness = dict(type='Brightness', magnitude=0.4, prob=0.8,
                  random_negative_prob=0.5)
view_a_pipeline = [
    brightness,
    dict(type='GaussianBlur', magnitude_range=(0.1, 1.0),
         magnitude_std='inf', prob=0.5),
]
view_b_pipeline = [
    brightness,
    dict(type='GaussianBlur', magnitude_range=(0.1, 1.0),
         magnitude_std='inf', prob=0.1),
    dict(type='Solarize', thr=128, prob=0.2),
]
train_pipeline = [
    dict(type='Pad', size=(img_size, img_size), pad_val=0),
    dict(type='TwoViewRandomResizedCrop', size=img_size, scale=(0.25, 1.0),
         flip_prob=0.5, interpolation='bicubic'),
    dict(type='PerViewTransforms',
         pipelines=[view_a_pipeline, view_b_pipeline]),
    dict(type='BlockwiseMaskGenerator', input_size=grid,
         num_masking_patches=38, min_num_patches=4, fixed_count=True),
    dict(type='PackInputs', algorithm_keys=['crop_boxes', 'flips'],
         meta_keys=['ori_shape', 'img_shape']),
]
train_dataloader = dict(
    batch_size=64,
    num_workers=1,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='FashionMNIST', data_prefix=data_root,
                 test_mode=False, pipeline=train_pipeline))

# bf16 autocast on the CPU (AVX-512 BF16 / AMX; emulated, slower, elsewhere:
# use --cfg-options optim_wrapper.dtype=float32 there).
optim_wrapper = dict(
    type='AutocastOptimWrapper',
    dtype='bfloat16',
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.95),
                   weight_decay=0.05),
    clip_grad=dict(max_norm=1.0),
    paramwise_cfg=dict(
        norm_decay_mult=0.0,
        bias_decay_mult=0.0,
        custom_keys={
            'pos_embed': dict(decay_mult=0.),
            'cls_token': dict(decay_mult=0.),
            'mask_token': dict(decay_mult=0.),
        }))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0,
         end=warmup_epochs, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', T_max=max_epochs - warmup_epochs,
         eta_min=1e-6, by_epoch=True, begin=warmup_epochs, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=50),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=2))
custom_hooks = [dict(type='StopOnNonFiniteLossHook', interval=1)]
env_cfg = dict(cudnn_benchmark=False, mp_cfg=dict(mp_start_method='fork'),
               dist_cfg=dict(backend='gloo'))
