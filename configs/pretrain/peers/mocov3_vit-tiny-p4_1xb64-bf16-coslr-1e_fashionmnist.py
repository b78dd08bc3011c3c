# mmpretrain's own MoCo-v3 under the SiameseIM Fashion-MNIST budget (peer for
# `tools/studies/demo.py --compare mocov3`): two augmented views, InfoNCE on
# the cls token through projector and predictor, momentum encoder.
_base_ = ['../_base_/fashionmnist_budget.py']

model = dict(
    type='MoCoV3',
    base_momentum=0.01,
    data_preprocessor={{_base_.data_preprocessor}},
    backbone=dict(
        type='MoCoV3ViT',
        arch={{_base_.vit_arch}},
        img_size=32,
        patch_size=4,
        stop_grad_conv1=True,
        final_norm=False,
        patch_cfg=dict(in_channels=1)),
    neck=dict(
        type='NonLinearNeck',
        in_channels=128,
        hid_channels=512,
        out_channels=128,
        num_layers=3,
        with_bias=False,
        with_last_bn=True,
        with_last_bn_affine=False,
        with_last_bias=False,
        with_avg_pool=False),
    head=dict(
        type='MoCoV3Head',
        predictor=dict(
            type='NonLinearNeck',
            in_channels=128,
            hid_channels=512,
            out_channels=128,
            num_layers=2,
            with_bias=False,
            with_last_bn=True,
            with_last_bn_affine=False,
            with_last_bias=False,
            with_avg_pool=False),
        loss=dict(type='CrossEntropyLoss', loss_weight=2 * 0.2),
        temperature=0.2))
brightness = dict(
    type='Brightness', magnitude=0.4, prob=0.8, random_negative_prob=0.5)
view_pipeline = [
    dict(
        type='RandomResizedCrop',
        scale=32,
        crop_ratio_range=(0.25, 1.0),
        backend='cv2',
        interpolation='bicubic'),
    brightness,
    dict(
        type='GaussianBlur',
        magnitude_range=(0.1, 1.0),
        magnitude_std='inf',
        prob=0.3),
    dict(type='Solarize', thr=128, prob=0.1),
    dict(type='RandomFlip', prob=0.5),
]
train_dataloader = dict(
    dataset=dict(pipeline=[
        dict(type='Pad', size=(32, 32), pad_val=0),
        dict(type='MultiView', num_views=2, transforms=[view_pipeline]),
        dict(type='PackInputs'),
    ]))
