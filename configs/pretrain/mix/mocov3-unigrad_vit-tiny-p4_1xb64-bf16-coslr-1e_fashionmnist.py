# MoCo-v3 with the UniGrad loss instead of InfoNCE: mmpretrain's MoCoV3
# (backbone, neck, predictor, momentum encoder, views) of the Fashion-MNIST
# peer config, and our UniGradHead on the (B, C) embeddings, one sample per
# image ('global'), SiameseIM's loss settings (lambda 0.02, MAE-like target
# normalisation).
_base_ = ['../peers/mocov3_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

model = dict(
    head=dict(
        _delete_=True,
        type='UniGradHead',
        loss_type='global',
        predictor={{_base_.model.head.predictor}},
        loss=dict(type='UniGradLoss', lambda_neg=0.02,
                  target_norm='mae-like')))
