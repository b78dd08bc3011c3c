# ViT-L/16, 1600 epochs: the ViT-B/16 400-epoch config with a larger
# encoder and decoder and the 1600-epoch schedule.
_base_ = [
    '_base_/siameseim_vit-base-p16.py',
    '_base_/imagenet_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]

max_epochs = 1600
# the base's warm-up (40 epochs) and cosine, which ends with max_epochs
train_cfg = dict(max_epochs=max_epochs)

model = dict(
    backbone=dict(arch='l'),
    neck=dict(in_channels=1024, embed_dims=1024, num_heads=16))

# Online kNN during pretraining: see the commented OnlineKNNHook example in
# siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py.
