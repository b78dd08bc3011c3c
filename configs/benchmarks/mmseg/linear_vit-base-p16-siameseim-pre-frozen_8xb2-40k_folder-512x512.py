# A linear head on a frozen SiameseIM-pretrained ViT-B/16, on your own images
# and masks: a 1x1 convolution (mmseg's FCNHead without convolutions) over
# the last block's patch features, upsampled to the image: the dense
# counterpart of a linear probe (the Fashion-MNIST mosaic probe, at full
# size). The backbone keeps its pretrained weights (SiameseIMMAE frozen=True:
# no gradient, no drop path); AdamW lr 1e-3, 1500 warm-up iterations, then
# linear decay over 40k iterations at batch 16; the data, augmentation and
# sliding-window test of the UperNet config beside this one:
#
#   mim train mmsegmentation <this config> --cfg-options \
#       model.backbone.init_cfg.checkpoint=PRETRAINING.pth \
#       train_dataloader.dataset.data_root=DIR \
#       val_dataloader.dataset.data_root=DIR model.decode_head.num_classes=N
#
#   mim test mmsegmentation <this config> \
#       --checkpoint WORK_DIR/iter_40000.pth \
#       --cfg-options test_dataloader.dataset.data_root=DIR \
#       model.decode_head.num_classes=N
_base_ = './upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_folder-512x512.py'  # noqa: E501 (a config name)

model = dict(
    backbone=dict(frozen=True, drop_path_rate=0.0, out_indices=[11]),
    neck=None,
    decode_head=dict(
        _delete_=True,
        type='FCNHead',
        in_channels=768,
        channels=768,
        in_index=0,
        num_convs=0,
        concat_input=False,
        dropout_ratio=0.0,
        num_classes=150,
        align_corners=False,
        loss_decode=dict(
            type='CrossEntropyLoss', use_sigmoid=False, loss_weight=1.0)),
    auxiliary_head=None)

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(
        type='AdamW', lr=1e-3, betas=(0.9, 0.999), weight_decay=1e-4))
warmup_iters = 1500
max_iters = 40000
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
train_cfg = dict(max_iters=max_iters, val_interval=4000)
default_hooks = dict(checkpoint=dict(interval=4000))
