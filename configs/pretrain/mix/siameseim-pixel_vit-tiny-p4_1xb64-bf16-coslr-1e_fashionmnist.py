# SiameseIM with the pixel target (the paper's Table 3 row (a) setting on
# the Fashion-MNIST demo): the predictor predicts view b's normalised
# 4x4 one-channel pixel patches, no target branch. Everything else is the
# demo config.
_base_ = ['../siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

model = dict(target_type='pixel', neck=dict(out_channels=4 * 4 * 1))
