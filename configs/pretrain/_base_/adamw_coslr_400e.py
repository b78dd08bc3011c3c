# Appendix: AdamW (0.9, 0.95), lr 1e-3 at batch 4096 (linear scaling through
# auto_scale_lr), weight decay 0.05 grouped as the authors (timm: no decay
# on 1-D parameters and biases only; see below); 40 warm-up epochs then
# cosine; clip 1.0; AMP.
# The authors' weight-decay groups (timm's param_groups_weight_decay): no
# decay exactly for parameters with ndim <= 1 (norm weights, biases) or a
# name ending in '.bias'; everything else is decayed, cls token, mask token
# and the decoder position MLP included. Frozen parameters (fixed position
# embeddings, the frozen patch embedding, the momentum target) get no group,
# as with mmengine's constructor and timm; SkipFrozenOptimWrapperConstructor
# names the frozen modules in one log line instead of a warning per tensor.
# The same in every SiameseIM pretraining schedule (the ImageNet one and
# fashionmnist_budget.py; tests/test_configs/test_weight_decay_groups.py).
no_decay = dict(
    bias_decay_mult=0.0,  # any parameter named 'bias'
    flat_decay_mult=0.0,  # any 1-D parameter (norm weights)
)
max_epochs = 400
warmup_epochs = 40
optim_wrapper = dict(
    constructor='SkipFrozenOptimWrapperConstructor',
    type='AmpOptimWrapper',
    loss_scale='dynamic',
    # fused: one kernel over all parameters (CPU and CUDA), about 5x
    # faster than the foreach default on CPU; same update to rounding
    optimizer=dict(
        type='AdamW',
        lr=1e-3,
        betas=(0.9, 0.95),
        weight_decay=0.05,
        fused=True),
    clip_grad=dict(max_norm=1.0),
    paramwise_cfg=no_decay)
# The cosine has no `end`/`T_max`: it ends with train_cfg.max_epochs (the
# 1600-epoch configs only change that), at exactly eta_min; MinIter*: the
# warm-up hands over at exactly the base lr on any epoch length.
param_scheduler = [
    dict(
        type='MinIterLinearLR',
        start_factor=1e-4,
        by_epoch=True,
        begin=0,
        end=warmup_epochs,
        convert_to_iter_based=True),
    dict(
        type='MinIterCosineAnnealingLR',
        eta_min=0.,
        by_epoch=True,
        begin=warmup_epochs,
        convert_to_iter_based=True),
]
train_cfg = dict(type='ExactResumeEpochBasedTrainLoop', max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=4096)
