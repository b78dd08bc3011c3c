# SiameseIM ViT-S/16 pretraining on your own images (the ViT-B/16 folder
# config with a smaller encoder; docs/pretraining/own_images.md).
#
#   mim train mmpretrain <this config> \
#       --cfg-options train_dataloader.dataset.data_root=/path/to/images
#
# Encoder: mmpretrain's 'deit-s' arch, the ViT-S/16 of DeiT, DINO and
# MoCo v3: 384 wide, 12 blocks, 6 heads. The authors publish no ViT-S
# config; our choice for the projector and predictor: the encoder's width
# (384, as their ViT-B and ViT-L use the encoder's width) and 6 heads (head
# width 64, the encoder's and their ViT-L's), the same depths (2 and 4).
_base_ = [
    '_base_/siameseim_vit-base-p16.py',
    '_base_/image_folder_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]

model = dict(
    backbone=dict(arch='deit-s'),
    neck=dict(in_channels=384, embed_dims=384, num_heads=6))
