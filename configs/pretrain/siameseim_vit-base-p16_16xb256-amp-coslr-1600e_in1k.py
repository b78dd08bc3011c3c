_base_ = 'siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'

max_epochs = 1600
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-4, by_epoch=True, begin=0, end=40,
         convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', T_max=max_epochs - 40, eta_min=0.,
         by_epoch=True, begin=40, end=max_epochs, convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)

# Online kNN during pretraining: see the commented OnlineKNNHook example in
# siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py.
