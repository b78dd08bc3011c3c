# ViTDet fine-tuning schedule (paper appendix, Tab. COCO / LVIS): AdamW
# (0.9, 0.999), weight decay 0.1, layer-wise lr decay 0.7 over 12 blocks,
# 250 linear warm-up iterations, 100 epochs with a step schedule (x0.1 twice).
# ViTDet's milestones are 163889 and 177546 of 184375 iterations
# (detectron2 projects/ViTDet/configs/COCO/mask_rcnn_vitdet_b_100ep.py),
# i.e. 88.9 and 96.3 of 100 epochs: epochs 89 and 96 here. AMP as ViTDet.
max_epochs = 100

train_cfg = dict(
    type='EpochBasedTrainLoop', max_epochs=max_epochs, val_interval=10)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

optim_wrapper = dict(
    type='AmpOptimWrapper',
    constructor='ViTLayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(
        decay_rate=0.7,
        num_layers=12,
        norm_decay_mult=0.0,
        no_decay_names=('pos_embed', )),
    optimizer=dict(
        type='AdamW', lr=1e-4, betas=(0.9, 0.999), weight_decay=0.1))

param_scheduler = [
    dict(
        type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=250),
    dict(
        type='MultiStepLR',
        begin=0,
        end=max_epochs,
        by_epoch=True,
        milestones=[89, 96],
        gamma=0.1),
]

# The learning rates above are for a total batch of 64 (16 GPUs x 4);
# pass --auto-scale-lr to scale them linearly for another total batch.
auto_scale_lr = dict(enable=False, base_batch_size=64)
