# Full fine-tuning of a SiameseIM-pretrained ViT-B/16 on ImageNet-1k
# (paper Tab. 2(a) "FT", appendix Tab. 9; MAE's recipe with lr 1e-3).
# Batch 1024 = 8 GPUs x 128; peak lr 1e-3 at that batch (the authors'
# script: blr 2.5e-4 x 1024 / 256). Pass the pretraining checkpoint with
#   --cfg-options model.backbone.init_cfg.checkpoint=PATH
# Global average pooling + LayerNorm (out_type='avg_featmap'), as MAE's and
# the authors' fine-tuning (global_pool=True).
_base_ = [
    './_base_/datasets/imagenet_bs128_randaug-erase_224.py',
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
        drop_path_rate=0.1,
        out_type='avg_featmap',
        final_norm=False,
        # scope mmsiameseim: a checkpoint without the backbone's weights
        # is refused (mmengine's Pretrained would load it and go on)
        init_cfg=dict(
            type='Pretrained',
            _scope_='mmsiameseim',
            checkpoint=checkpoint,
            prefix='backbone.')),
    neck=None,
    head=dict(
        type='LinearClsHead',
        num_classes=1000,
        in_channels=768,
        loss=dict(
            type='LabelSmoothLoss', label_smooth_val=0.1, mode='original'),
        init_cfg=[dict(type='TruncNormal', layer='Linear', std=2e-5)]),
    # One of the two per batch, with equal probability (timm switch_prob
    # 0.5); 0.8 and 1.0 are the Beta(alpha, alpha) parameters (MAE's
    # --mixup 0.8 --cutmix 1.0).
    train_cfg=dict(augments=[
        dict(type='Mixup', alpha=0.8),
        dict(type='CutMix', alpha=1.0),
    ]))

# AdamW with layer-wise lr decay 0.65; no weight decay on norms, biases,
# the position embedding and the cls token.
optim_wrapper = dict(
    optimizer=dict(
        type='AdamW', lr=1e-3, betas=(0.9, 0.999), weight_decay=0.05),
    constructor='LearningRateDecayOptimWrapperConstructor',
    paramwise_cfg=dict(
        layer_decay_rate=0.65,
        custom_keys={
            '.ln': dict(decay_mult=0.0),
            '.bias': dict(decay_mult=0.0),
            '.cls_token': dict(decay_mult=0.0),
            '.pos_embed': dict(decay_mult=0.0),
        }))
# 5 warm-up epochs, then cosine to MAE's min lr 1e-6.
param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=1e-4,
        by_epoch=True,
        begin=0,
        end=5,
        convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        T_max=95,
        eta_min=1e-6,
        by_epoch=True,
        begin=5,
        end=100,
        convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=100, val_interval=1)
val_cfg = dict()
test_cfg = dict()
# lr 1e-3 is for a total batch of 1024: other GPU counts scale it linearly
# with --auto-scale-lr.
auto_scale_lr = dict(base_batch_size=1024)

default_hooks = dict(
    logger=dict(type='LoggerHook', interval=100),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=3))
randomness = dict(seed=0, diff_rank_seed=True)
