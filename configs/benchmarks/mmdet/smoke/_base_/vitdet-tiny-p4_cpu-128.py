# What the two CPU smoke configs of this folder change in the benchmark
# configs, as named variables (each smoke config has a benchmark config as
# its other base, and bases may not share a key): the Fashion-MNIST demo
# checkpoint's ViT (128 wide, 4 blocks, 4 heads, patch 4, pretrained at
# 32 x 32; its 1-channel patch embedding is replicated over RGB when
# loaded), windows of 4 with global blocks 1 and 3, the pyramid's strides
# of patch 4 (1 to 16) for the anchors and RoIs, heads 64 wide, fewer
# proposals, 10 classes, 128 x 128 images, one epoch, fp32 (AMP needs a GPU).
smoke_size = (128, 128)
smoke_classes = ('tshirt_top', 'trouser', 'pullover', 'dress', 'coat',
                 'sandal', 'shirt', 'sneaker', 'bag', 'ankle_boot')

smoke_model = dict(
    data_preprocessor=dict(batch_augments=[
        dict(type='BatchFixedSizePad', size=smoke_size, pad_mask=True)
    ]),
    backbone=dict(
        arch=dict(
            embed_dims=128,
            num_layers=4,
            num_heads=4,
            feedforward_channels=512),
        img_size=smoke_size[0],
        patch_size=4,
        pretrain_img_size=32,
        window_size=4,
        global_attn_indexes=[1, 3],
        init_cfg=dict(checkpoint='work_dirs/demo/siameseim/epoch_1.pth')),
    neck=dict(
        backbone_channel=128, in_channels=[32, 64, 128, 128], out_channels=64),
    # patch 4: SimpleFPN's levels have strides 1 to 16 (not 4 to 64)
    rpn_head=dict(
        in_channels=64,
        feat_channels=64,
        anchor_generator=dict(strides=[1, 2, 4, 8, 16])),
    roi_head=dict(
        bbox_roi_extractor=dict(out_channels=64, featmap_strides=[1, 2, 4, 8]),
        bbox_head=dict(
            in_channels=64,
            conv_out_channels=64,
            fc_out_channels=256,
            num_classes=len(smoke_classes)),
        mask_roi_extractor=dict(out_channels=64, featmap_strides=[1, 2, 4, 8]),
        mask_head=dict(
            in_channels=64,
            conv_out_channels=64,
            num_classes=len(smoke_classes))),
    # fewer proposals / sampled RoIs: the 4-conv box head dominates CPU
    # time; an untrained detector scores low, keep its boxes for the metric
    train_cfg=dict(
        rpn_proposal=dict(max_per_img=100), rcnn=dict(sampler=dict(num=64))),
    test_cfg=dict(
        rpn=dict(max_per_img=100), rcnn=dict(max_per_img=20, score_thr=0.0)))

smoke_optim_wrapper = dict(
    type='OptimWrapper', paramwise_cfg=dict(num_layers=4))

# The benchmark's LSJ pipelines at the smoke size.
smoke_train_pipeline = [
    dict(type='LoadImageFromFile', backend_args=None),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(
        type='RandomResize',
        scale=smoke_size,
        ratio_range=(0.1, 2.0),
        keep_ratio=True),
    dict(
        type='RandomCrop',
        crop_type='absolute_range',
        crop_size=smoke_size,
        recompute_bbox=True,
        allow_negative_crop=True),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1e-2, 1e-2)),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PackDetInputs'),
]
smoke_test_pipeline = [
    dict(type='LoadImageFromFile', backend_args=None),
    dict(type='Resize', scale=smoke_size, keep_ratio=True),
    dict(
        type='PadKeepImgShape',
        size=smoke_size,
        pad_val=dict(img=(114, 114, 114))),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(
        type='PackDetInputs',
        meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape',
                   'scale_factor')),
]
smoke_schedule = dict(max_epochs=1, val_interval=1)
