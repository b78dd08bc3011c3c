# BYOL with the UniGrad loss and SiameseIM's two views: mmpretrain's BYOL
# (online network + predictor, momentum target) on the budget ViT's cls
# token, our UniGradHead ('global': one sample per image) in place of the
# cosine loss, and the views of the SiameseIM demo (TwoViewRandomResizedCrop
# and per-view colour pipelines; the crop geometry is not used by BYOL).
_base_ = ['../_base_/fashionmnist_budget.py']

embed_dims = 128
mlp = dict(
    type='NonLinearNeck',
    in_channels=embed_dims,
    hid_channels=512,
    out_channels=embed_dims,
    num_layers=2,
    with_bias=True,
    with_last_bn=False,
    with_avg_pool=False)
model = dict(
    type='BYOL',
    base_momentum=0.01,
    data_preprocessor={{_base_.data_preprocessor}},
    backbone=dict(
        type='VisionTransformer',
        arch={{_base_.vit_arch}},
        img_size=32,
        patch_size=4,
        in_channels=1,
        final_norm=False,
        out_type='cls_token'),
    neck=mlp,
    head=dict(
        type='UniGradHead',
        loss_type='global',
        predictor=mlp,
        loss=dict(type='UniGradLoss', lambda_neg=0.02,
                  target_norm='mae-like')))

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
            pipelines=[{{_base_.view_a_pipeline}}, {{_base_.view_b_pipeline}}
                       ]),
        dict(type='PackInputs'),
    ]))
