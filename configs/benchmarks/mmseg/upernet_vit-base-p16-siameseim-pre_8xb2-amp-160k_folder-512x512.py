# UperNet with a SiameseIM-pretrained ViT-B/16 on your own images and masks:
# the ADE20k recipe of this folder (512 x 512 crops, AdamW with layer decay
# 0.65, 160k iterations at batch 16) on SegmentationFolder:
#
#   DIR/classes.txt                  one class name per line (mask value i)
#   DIR/images/{train,val}/**/NAME.<ext>
#   DIR/masks/{train,val}/**/NAME.png    8-bit class indices, 255 ignored
#
#   mim train mmsegmentation <this config> --cfg-options \
#       model.backbone.init_cfg.checkpoint=PRETRAINING.pth \
#       train_dataloader.dataset.data_root=DIR \
#       val_dataloader.dataset.data_root=DIR \
#       model.decode_head.num_classes=N model.auxiliary_head.num_classes=N
#
# Masks are class indices as they are (no reduce_zero_label, unlike ADE20k);
# every mask is checked against its image (mode, size, values) once when the
# dataset is built. ClassCountCheckHook stops before the first step, naming
# both options, when N is not the number of classes in classes.txt.
# `mim test` scores the val split with the val settings (another split of
# DIR: test_dataloader.dataset.split=NAME):
#
#   mim test mmsegmentation <this config> \
#       --checkpoint WORK_DIR/iter_160000.pth \
#       --cfg-options test_dataloader.dataset.data_root=DIR \
#       model.decode_head.num_classes=N model.auxiliary_head.num_classes=N
_base_ = './upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_ade20k-512x512.py'  # noqa: E501 (a config name)

crop_size = (512, 512)
scale = (2048, 512)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations'),
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
    dict(type='LoadAnnotations'),
    dict(type='PackSegInputs'),
]
train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='SegmentationFolder',
        data_root=None,
        split='train',
        pipeline=train_pipeline))
val_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='SegmentationFolder',
        data_root=None,
        split='val',
        pipeline=test_pipeline))
test_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='SegmentationFolder',
        data_root=None,
        split='val',
        pipeline=test_pipeline))
custom_hooks = [dict(type='mmpretrain.ClassCountCheckHook')]
