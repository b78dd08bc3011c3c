# Linear probe of a frozen ViT (from configs/pretrain/
# siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py) on
# Fashion-MNIST: BatchNorm without affine, then a linear classifier, as the
# paper's protocol. Pass the pretrained checkpoint with
#   --cfg-options model.backbone.init_cfg.checkpoint=PATH
_base_ = 'mmpretrain::_base_/default_runtime.py'

custom_imports = dict(imports=['mmsiameseim'], allow_failed_imports=False)
# FaultTolerantRunner (mmsiameseim): checkpoints written atomically, a
# checkpoint and exit 128+signal on SIGTERM / SIGUSR1, resume checks, no
# silent overwrite (docs/pretraining/resume_and_preemption.md)
runner_type = 'FaultTolerantRunner'
# the repo's data/ folder, wherever the command runs from; LocalFashionMNIST
# never downloads (a missing file is named with the set-up step)
data_root = '{{ fileDirname }}/../../../data/fashion_mnist/'
embed_dims = 128

model = dict(
    type='ImageClassifier',
    data_preprocessor=dict(
        type='ClsDataPreprocessor', num_classes=10, mean=[72.94], std=[90.02]),
    backbone=dict(
        type='VisionTransformer',
        arch=dict(
            embed_dims=embed_dims,
            num_layers=4,
            num_heads=4,
            feedforward_channels=embed_dims * 4),
        img_size=32,
        patch_size=4,
        in_channels=1,
        final_norm=False,
        out_type='cls_token',
        frozen_stages=4,
        # scope mmsiameseim: a checkpoint without the backbone's weights
        # is refused (mmengine's Pretrained would load it and go on)
        init_cfg=dict(
            type='Pretrained',
            _scope_='mmsiameseim',
            checkpoint='',
            prefix='backbone.')),
    neck=dict(type='ClsBatchNormNeck', input_features=embed_dims),
    head=dict(
        type='LinearClsHead',
        num_classes=10,
        in_channels=embed_dims,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        init_cfg=dict(type='TruncNormal', layer='Linear', std=0.01)))

train_pipeline = [
    dict(type='Pad', size=(32, 32), pad_val=0),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='Pad', size=(32, 32), pad_val=0),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=256,
    num_workers=1,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type='LocalFashionMNIST',
        data_prefix=data_root,
        test_mode=False,
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=500,
    num_workers=1,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type='LocalFashionMNIST',
        data_prefix=data_root,
        test_mode=True,
        pipeline=test_pipeline))
val_evaluator = dict(type='Accuracy', topk=(1, ))
test_dataloader = val_dataloader
test_evaluator = val_evaluator

# No weight decay on a linear probe; SGD with cosine decay (LARS only pays
# off at the paper's batch 16384).
optim_wrapper = dict(
    optimizer=dict(type='SGD', lr=0.5, momentum=0.9, weight_decay=0.))
param_scheduler = [
    dict(
        type='CosineAnnealingLR',
        T_max=10,
        by_epoch=True,
        begin=0,
        end=10,
        convert_to_iter_based=True)
]
train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=10)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=256)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=50),
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=1))
env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork'),
    dist_cfg=dict(backend='gloo'))
