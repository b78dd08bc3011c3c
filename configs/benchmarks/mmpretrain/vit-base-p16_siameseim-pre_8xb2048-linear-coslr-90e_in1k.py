# Linear probe of a frozen SiameseIM-pretrained ViT-B/16 on ImageNet-1k
# (paper Tab. 2(a) "LIN", appendix Tab. 10): BatchNorm without affine, then
# a linear classifier; LARS lr 3.2 at batch 16384 = 8 GPUs x 2048, no weight
# decay, 10 warm-up epochs + cosine, 90 epochs. Pass the pretraining
# checkpoint with --cfg-options model.backbone.init_cfg.checkpoint=PATH
# Features: global average pooling + a (frozen, un-trained) LayerNorm, as
# the authors' linear-probe script (--global_pool).
_base_ = [
    './_base_/datasets/imagenet_bs2048_rrc-flip_224.py',
    'mmpretrain::_base_/default_runtime.py',
]
custom_imports = dict(imports=['mmsiameseim'], allow_failed_imports=False)
# FaultTolerantRunner (mmsiameseim): checkpoints written atomically, a
# checkpoint and exit 128+signal on SIGTERM / SIGUSR1, resume checks, no
# silent overwrite (docs/pretraining/resume_and_preemption.md)
runner_type = 'FaultTolerantRunner'

checkpoint = ''  # SiameseIM pretraining checkpoint (backbone.* keys)

model = dict(
    type='ImageClassifier',
    data_preprocessor={{_base_.data_preprocessor}},
    backbone=dict(
        type='VisionTransformer',
        arch='base',
        img_size=224,
        patch_size=16,
        frozen_stages=12,
        out_type='avg_featmap',
        final_norm=False,
        # scope mmsiameseim: a checkpoint without the backbone's weights
        # is refused (mmengine's Pretrained would load it and go on)
        init_cfg=dict(
            type='Pretrained',
            _scope_='mmsiameseim',
            checkpoint=checkpoint,
            prefix='backbone.')),
    neck=dict(type='ClsBatchNormNeck', input_features=768, affine=False),
    head=dict(
        type='LinearClsHead',
        num_classes=1000,
        in_channels=768,
        loss=dict(type='CrossEntropyLoss'),
        init_cfg=[dict(type='TruncNormal', layer='Linear', std=0.01)]))

# LARS trust ratio on the weight only (MAE's LARS skips 1-D parameters).
optim_wrapper = dict(
    optimizer=dict(type='LARS', lr=3.2, momentum=0.9, weight_decay=0.0),
    paramwise_cfg=dict(custom_keys={'bias': dict(lars_exclude=True)}))
param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=1e-4,
        by_epoch=True,
        begin=0,
        end=10,
        convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        T_max=80,
        eta_min=0.0,
        by_epoch=True,
        begin=10,
        end=90,
        convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=90, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=16384)

default_hooks = dict(
    logger=dict(type='LoggerHook', interval=10),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=3))
randomness = dict(seed=0, diff_rank_seed=True)
