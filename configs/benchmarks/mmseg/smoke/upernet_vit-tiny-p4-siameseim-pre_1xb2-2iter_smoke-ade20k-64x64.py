# CPU smoke run of the ADE20k benchmark config: the UperNet config of the
# folder above shrunk to the Fashion-MNIST demo's ViT (128 wide, 4 blocks,
# 4 heads, patch 4; its checkpoint comes from `make demo`) on 64 x 64 crops,
# with the demo's grayscale normalisation, fp32 (AmpOptimWrapper needs a
# GPU), layer decay over 4 blocks and mmseg's resize scales divided by 8;
# 2 iterations, then the sliding-window evaluation. Everything else (UperNet,
# AdamW, layer decay 0.65, warm-up) is the benchmark config's. Data:
#   python tools/dataset_converters/make_smoke_ade20k.py --out data/smoke
_base_ = '../upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_ade20k-512x512.py'  # noqa: E501 (a config name)

data_root = 'data/smoke/ade/ADEChallengeData2016'
crop_size = (64, 64)
scale = (256, 64)  # mmseg's (2048, 512) / 8

model = dict(
    data_preprocessor=dict(size=crop_size, mean=[72.94] * 3, std=[90.02] * 3),
    backbone=dict(
        img_size=crop_size,
        patch_size=4,
        embed_dims=128,
        num_layers=4,
        num_heads=4,
        out_indices=[0, 1, 2, 3],
        init_cfg=dict(checkpoint='work_dirs/demo/siameseim/epoch_1.pth')),
    neck=dict(embed_dim=128),
    decode_head=dict(in_channels=[128, 128, 128, 128], channels=128),
    auxiliary_head=dict(in_channels=128),
    test_cfg=dict(crop_size=crop_size, stride=(42, 42)))

optim_wrapper = dict(type='OptimWrapper', paramwise_cfg=dict(num_layers=4))
train_cfg = dict(max_iters=2, val_interval=2)
default_hooks = dict(logger=dict(interval=1))
randomness = dict(seed=0)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(
        type='RandomResize',
        scale=scale,
        ratio_range=(0.5, 2.0),
        keep_ratio=True),
    dict(type='RandomCrop', crop_size=crop_size, cat_max_ratio=0.75),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PhotoMetricDistortion'),
    dict(type='PackSegInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=scale, keep_ratio=True),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='PackSegInputs'),
]
train_dataloader = dict(
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader
