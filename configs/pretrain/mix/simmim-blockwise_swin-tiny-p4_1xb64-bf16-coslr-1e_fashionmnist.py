# SimMIM with SiameseIM's view a and blockwise mask: mmpretrain's SimMIM
# (Swin encoder with a mask token, linear pixel decoder, L1 on the masked
# pixels) fed by TwoViewRandomResizedCrop + PerViewTransforms +
# BlockwiseMaskGenerator (38 / 64 patches, as the SiameseIM demo), keeping
# view a only (SelectView). A 2-stage Swin (128 then 256 wide, 2 + 2 blocks,
# windows as large as each stage's map: global attention on the 8x8 patch
# grid, then on the 4x4 merged grid) matches the budget ViT's 4 blocks.
#
# mmpretrain's SimMIMLinearDecoder always predicts 3 channels, so the
# normaliser's 3-value mean/std broadcasts each one-channel image to 3
# identical channels (the model sees grey RGB images).
_base_ = ['../_base_/fashionmnist_budget.py']

grid = 8
model = dict(
    type='SimMIM',
    data_preprocessor=dict(
        type='SelfSupDataPreprocessor', mean=[72.94] * 3, std=[90.02] * 3),
    backbone=dict(
        type='SimMIMSwinTransformer',
        arch=dict(embed_dims=128, depths=[2, 2], num_heads=[4, 8]),
        img_size=32,
        in_channels=3,
        drop_path_rate=0.,
        out_indices=(1, ),
        stage_cfgs=[dict(window_size=grid),
                    dict(window_size=grid // 2)]),
    neck=dict(type='SimMIMLinearDecoder', in_channels=256, encoder_stride=8),
    head=dict(
        type='SimMIMHead',
        patch_size=4,
        loss=dict(type='PixelReconstructionLoss', criterion='L1', channel=3)))

train_dataloader = dict(
    dataset=dict(pipeline=[
        dict(type='Pad', size=(32, 32), pad_val=0),
        dict(
            type='TwoViewRandomResizedCrop',
            size=32,
            scale=(0.25, 1.0),
            flip_prob=0.5,
            interpolation='bicubic'),
        dict(
            type='PerViewTransforms',
            pipelines=[{{_base_.view_a_pipeline}}, []]),
        dict(
            type='BlockwiseMaskGenerator',
            input_size=grid,
            num_masking_patches=38,
            min_num_patches=4,
            fixed_count=True),
        dict(type='SelectView', index=0),
        dict(type='PackInputs'),
    ]))
