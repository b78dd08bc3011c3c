# UperNet with a SiameseIM-pretrained ViT-B/16 on ADE20k (paper Table 2(b),
# appendix "Hyper-parameters for ADE20k semantic segmentation"). mmseg's own
# MAE/UperNet pieces; only the backbone's checkpoint loading is ours. Pass
# the pretraining checkpoint with
#   --cfg-options model.backbone.init_cfg.checkpoint=PATH
# See README.md in this folder.
_base_ = [
    'mmseg::_base_/models/upernet_mae.py',
    'mmseg::_base_/datasets/ade20k.py',
    'mmseg::_base_/default_runtime.py',
    'mmseg::_base_/schedules/schedule_160k.py',
]
custom_imports = dict(imports=['mmsiameseim.seg'], allow_failed_imports=False)
# FaultTolerantRunner (mmsiameseim): checkpoints written atomically, a
# checkpoint and exit 128+signal on SIGTERM / SIGUSR1, resume checks, no
# silent overwrite (docs/pretraining/resume_and_preemption.md)
runner_type = 'FaultTolerantRunner'

crop_size = (512, 512)
model = dict(
    data_preprocessor=dict(size=crop_size),
    backbone=dict(
        type='SiameseIMMAE',
        img_size=crop_size,
        patch_size=16,
        embed_dims=768,
        num_layers=12,
        num_heads=12,
        mlp_ratio=4,
        # Layer scale starts at 1 (the pretrained blocks have none) and the
        # relative position bias at 0, so the loaded network starts as the
        # pretrained one.
        init_values=1.0,
        drop_path_rate=0.1,
        out_indices=[3, 5, 7, 11],
        init_cfg=dict(type='Pretrained', checkpoint='', prefix='backbone.')),
    neck=dict(embed_dim=768, rescales=[4, 2, 1, 0.5]),
    decode_head=dict(
        in_channels=[768, 768, 768, 768], num_classes=150, channels=768),
    auxiliary_head=dict(in_channels=768, num_classes=150),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(341, 341)))

# AdamW (0.9, 0.999), peak lr 1e-4, weight decay 0.05, layer-wise lr decay
# 0.65 over the 12 blocks; AMP with dynamic loss scaling.
optim_wrapper = dict(
    _delete_=True,
    type='AmpOptimWrapper',
    optimizer=dict(
        type='AdamW', lr=1e-4, betas=(0.9, 0.999), weight_decay=0.05),
    paramwise_cfg=dict(num_layers=12, layer_decay_rate=0.65),
    constructor='LayerDecayOptimizerConstructor')

# 1500 warm-up iterations, then linear decay to 0 at 160k.
warmup_iters = 1500
max_iters = 160000
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
train_cfg = dict(max_iters=max_iters)

# Batch 16 = 8 GPUs x 2 images.
train_dataloader = dict(batch_size=2)
val_dataloader = dict(batch_size=1)
test_dataloader = val_dataloader
