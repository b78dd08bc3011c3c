# SiameseIM with a ViT-L encoder (mmpretrain's 'l' arch: 1024 wide,
# 24 blocks, 16 heads) through SiameseIMViT, under the Fashion-MNIST demo's
# budget and decoder. About 300 M encoder parameters: a configuration check
# on a CPU, not a demo to run to the end there.
_base_ = ['../siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

model = dict(backbone=dict(arch='l'), neck=dict(in_channels=1024))
