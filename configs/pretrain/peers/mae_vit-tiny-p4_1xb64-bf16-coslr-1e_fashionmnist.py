# mmpretrain's own MAE under the SiameseIM Fashion-MNIST budget (peer for
# `projects/demo/tools/demo.py --compare mae`): 75 % random masking,
# normalised-pixel
# target, and the augmentation of mmpretrain's MAE configs
# (_base_/datasets/imagenet_bs512_mae.py): crops of 20-100 % of the image
# (bicubic) and a horizontal flip, nothing else.
_base_ = ['../_base_/fashionmnist_budget.py']

model = dict(
    type='MAE',
    data_preprocessor={{_base_.data_preprocessor}},
    backbone=dict(
        type='MAEViT',
        arch={{_base_.vit_arch}},
        img_size=32,
        patch_size=4,
        mask_ratio=0.75,
        patch_cfg=dict(in_channels=1)),
    neck=dict(
        type='MAEPretrainDecoder',
        num_patches=64,
        patch_size=4,
        in_chans=1,
        embed_dim=128,
        decoder_embed_dim=128,
        decoder_depth=2,
        decoder_num_heads=4,
        mlp_ratio=4.),
    head=dict(
        type='MAEPretrainHead',
        norm_pix=True,
        patch_size=4,
        in_channels=1,
        loss=dict(type='PixelReconstructionLoss', criterion='L2')),
    init_cfg=[
        dict(type='Xavier', distribution='uniform', layer='Linear'),
        dict(type='Constant', layer='LayerNorm', val=1.0, bias=0.0)
    ])
train_dataloader = dict(
    dataset=dict(pipeline=[
        dict(type='Pad', size=(32, 32), pad_val=0),
        dict(
            type='RandomResizedCrop',
            scale=32,
            crop_ratio_range=(0.2, 1.0),
            backend='cv2',
            interpolation='bicubic'),
        dict(type='RandomFlip', prob=0.5),
        dict(type='PackInputs'),
    ]))
