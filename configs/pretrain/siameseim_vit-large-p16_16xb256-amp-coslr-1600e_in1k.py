_base_ = 'siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py'

model = dict(
    backbone=dict(arch='l'),
    neck=dict(in_channels=1024, embed_dims=1024, num_heads=16))

# Online kNN during pretraining: see the commented OnlineKNNHook example in
# siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py.
