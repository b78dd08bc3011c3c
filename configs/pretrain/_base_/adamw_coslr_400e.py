# Appendix: AdamW (0.9, 0.95), lr 1e-3 at batch 4096 (linear scaling through
# auto_scale_lr), weight decay 0.05 grouped as the authors (timm: no decay
# on 1-D parameters and biases only; see no_decay_paramwise.py); 40 warm-up
# epochs then cosine; clip 1.0; AMP.
_base_ = ['no_decay_paramwise.py']

max_epochs = 400
warmup_epochs = 40
optim_wrapper = dict(
    type='AmpOptimWrapper',
    loss_scale='dynamic',
    # fused: one kernel over all parameters (CPU and CUDA), about 5x
    # faster than the foreach default on CPU; same update to rounding
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.95),
                   weight_decay=0.05, fused=True),
    clip_grad=dict(max_norm=1.0),
    paramwise_cfg={{_base_.paramwise_cfg}})
# The cosine has no `end`/`T_max`: it ends with train_cfg.max_epochs (the
# 1600-epoch configs only change that), at exactly eta_min; MinIter*: the
# warm-up hands over at exactly the base lr on any epoch length.
param_scheduler = [
    dict(type='MinIterLinearLR', start_factor=1e-4, by_epoch=True, begin=0,
         end=warmup_epochs, convert_to_iter_based=True),
    dict(type='MinIterCosineAnnealingLR', eta_min=0., by_epoch=True,
         begin=warmup_epochs, convert_to_iter_based=True),
]
train_cfg = dict(type='ExactResumeEpochBasedTrainLoop', max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=4096)
