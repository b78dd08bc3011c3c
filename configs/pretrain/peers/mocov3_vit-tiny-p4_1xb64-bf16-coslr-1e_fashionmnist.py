# mmpretrain's own MoCo-v3 under the SiameseIM Fashion-MNIST budget (peer for
# `projects/demo/tools/demo.py --compare mocov3`): two augmented views, InfoNCE
# on
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
# The two views of mmpretrain's MoCo-v3 ViT config
# (configs/mocov3/mocov3_vit-small-p16_16xb256-amp-coslr-300e_in1k.py) and of
# its paper (BYOL's asymmetric pair): blur always on view 1 and with
# probability 0.1 on view 2, solarisation only on view 2 (0.2), crops of
# 8-100 % of the image. Grayscale images: its colour jitter reduces to the
# brightness jitter; saturation, hue and grayscale do not apply. The blur's
# sigma range is the budget's (0.1-1.0 px at 32 px, where ImageNet's is
# 0.1-2.0 at 224).
brightness = {{_base_.brightness}}


def moco_view(blur, solarize):
    return [
        dict(
            type='RandomResizedCrop',
            scale=32,
            crop_ratio_range=(0.08, 1.0),
            backend='cv2',
            interpolation='bicubic'),
        brightness,
        dict(
            type='GaussianBlur',
            magnitude_range=(0.1, 1.0),
            magnitude_std='inf',
            prob=blur),
        dict(type='Solarize', thr=128, prob=solarize),
        dict(type='RandomFlip', prob=0.5),
    ]


train_dataloader = dict(
    dataset=dict(pipeline=[
        dict(type='Pad', size=(32, 32), pad_val=0),
        dict(
            type='MultiView',
            num_views=[1, 1],
            transforms=[moco_view(1.0, 0.0),
                        moco_view(0.1, 0.2)]),
        dict(type='PackInputs'),
    ]))
