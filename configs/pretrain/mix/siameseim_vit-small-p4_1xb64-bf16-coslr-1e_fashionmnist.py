# SiameseIM with a ViT-S encoder (mmpretrain's 'deit-s' arch: 384 wide,
# 12 blocks, 6 heads, the ViT-S of DeiT, DINO and MoCo v3) through
# SiameseIMViT, under the Fashion-MNIST demo's budget and decoder.
_base_ = ['../siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

model = dict(backbone=dict(arch='deit-s'), neck=dict(in_channels=384))
