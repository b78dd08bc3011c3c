# The ADE20k UperNet benchmark config fine-tuned on the miniature
# ADE20k-layout data of
#   python projects/downstream_miniature/tools/make_miniature_downstream.py
# (data/miniature: Fashion-MNIST items, annotation 0 the background, ignored
# under reduce_zero_label as ADE20k's unlabelled pixels) from the demo
# checkpoint of `make demo`. Only what size demands changes: the demo's ViT
# (128 wide, 4 blocks, 4 heads, patch 4) with the demo's grayscale
# normalisation, 128 x 128 crops, the feature pyramid at strides 2 to 16
# (patch 4's map x2 ... x1/4), mmseg's resize scales divided by 4, the
# sliding window scaled alike, the 10 classes present (the ADE20k names of
# FASHION_TO_ADE in mmsiameseim/testing/ade20k.py, in Fashion-MNIST's
# order), layer decay over 4 blocks, fp32 (AMP needs a GPU), and a schedule
# of the benchmark's shape (linear warm-up, then linear decay to 0) of 600
# iterations at batch 8. UperNet, AdamW, layer decay 0.65 and the
# SiameseIM checkpoint loader are the benchmark config's.
_base_ = '../upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_ade20k-512x512.py'  # noqa: E501 (a config name)

data_root = 'data/miniature/ade/ADEChallengeData2016'
crop_size = (128, 128)
scale = (512, 128)  # mmseg's (2048, 512) / 4
classes = ('apparel', 'towel', 'blanket', 'curtain', 'cushion', 'pillow',
           'flag', 'plaything', 'bag', 'box')
max_iters = 600
warmup_iters = 50

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
    # Patch 4 makes the backbone map 4x finer than patch 16's: the pyramid
    # x2, x1, x1/2, x1/4 of it has strides 2 to 16 (the benchmark's x4 ...
    # x1/2 would give 1 to 8, UperNet's convolutions at full resolution).
    neck=dict(embed_dim=128, rescales=[2, 1, 0.5, 0.25]),
    decode_head=dict(
        in_channels=[128, 128, 128, 128],
        channels=128,
        num_classes=len(classes)),
    auxiliary_head=dict(in_channels=128, num_classes=len(classes)),
    test_cfg=dict(crop_size=crop_size, stride=(85, 85)))

optim_wrapper = dict(type='OptimWrapper', paramwise_cfg=dict(num_layers=4))
param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=1e-6,
        by_epoch=False,
        begin=0,
        end=warmup_iters),
    dict(
        type='PolyLR',
        eta_min=0.0,
        power=1.0,
        by_epoch=False,
        begin=warmup_iters,
        end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(
    logger=dict(interval=10),
    checkpoint=dict(interval=max_iters, max_keep_ckpts=1))

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
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        metainfo=dict(classes=classes),
        pipeline=train_pipeline))
val_dataloader = dict(
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        metainfo=dict(classes=classes),
        pipeline=test_pipeline))
test_dataloader = val_dataloader
