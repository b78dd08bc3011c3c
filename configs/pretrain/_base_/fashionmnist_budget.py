# The CPU budget shared by SiameseIM and its peers (MAE, MoCo-v3) on
# Fashion-MNIST: same ViT (128 wide, 4 blocks, 4 heads, patch 4 on 28x28
# padded to 32, one channel), same batch, epochs, optimizer, schedule and
# bf16 autocast (AVX-512 BF16 / AMX; emulated and slower elsewhere: use
# ../siameseim_vit-tiny-p4_1xb64-fp32-coslr-1e_fashionmnist.py, a plain
# OptimWrapper, there). Each config adds its model and its training pipeline.
_base_ = ['runtime.py']  # it changes the runtime's hooks for short CPU runs

# the repo's data/ folder, wherever the command runs from
data_root = '{{ fileDirname }}/../../../data/fashion_mnist/'
embed_dims = 128
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
max_epochs = 1
warmup_epochs = 0.1
vit_arch = dict(
    embed_dims=embed_dims,
    num_layers=4,
    num_heads=4,
    feedforward_channels=embed_dims * 4)
data_preprocessor = dict(
    type='EagerSelfSupDataPreprocessor', mean=[72.94], std=[90.02])

# The two views' colour transforms of SiameseIM and the two-view mix
# configs. Grayscale images: of the MoCo-v3 colour set, saturation, hue and
# random grayscale leave a grey image unchanged; what is kept is brightness
# jitter, blur and (view b) solarisation. Its contrast jitter would apply
# to grey images and is left out (for every method alike).
brightness = dict(
    type='Brightness', magnitude=0.4, prob=0.8, random_negative_prob=0.5)
view_a_pipeline = [
    brightness,
    dict(
        type='GaussianBlur',
        magnitude_range=(0.1, 1.0),
        magnitude_std='inf',
        prob=0.5),
]
view_b_pipeline = [
    brightness,
    dict(
        type='GaussianBlur',
        magnitude_range=(0.1, 1.0),
        magnitude_std='inf',
        prob=0.1),
    dict(type='Solarize', thr=128, prob=0.2),
]
train_dataloader = dict(
    batch_size=64,
    num_workers=1,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(
        type='LocalFashionMNIST', data_prefix=data_root, test_mode=False))
optim_wrapper = dict(
    constructor='SkipFrozenOptimWrapperConstructor',
    type='AutocastOptimWrapper',
    dtype='bfloat16',
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
# Warm-up to the base lr, then a cosine that ends at eta_min with the run:
# the cosine has no `end`/`T_max`, so it follows train_cfg.max_epochs (also
# when it is changed on the command line, or raised to extend a run).
# MinIter*: any epoch length, even of a few iterations, reaches the base lr
# and ends at eta_min (mmengine's own classes stay at start_factor * lr when
# the warm-up rounds to one iteration).
param_scheduler = [
    dict(
        type='MinIterLinearLR',
        start_factor=1e-3,
        by_epoch=True,
        begin=0,
        end=warmup_epochs,
        convert_to_iter_based=True),
    dict(
        type='MinIterCosineAnnealingLR',
        eta_min=1e-6,
        by_epoch=True,
        begin=warmup_epochs,
        convert_to_iter_based=True),
]
train_cfg = dict(type='ExactResumeEpochBasedTrainLoop', max_epochs=max_epochs)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=50),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=2))
custom_hooks = [
    dict(type='StopOnNonFiniteLossHook', interval=1),
    # every ~45 s of the demo (938 iterations per epoch at ~4.5 it/s)
    dict(
        type='CheckpointHook',
        by_epoch=False,
        interval=200,
        save_last=False,
        max_keep_ckpts=2),
]
# gloo: CPU processes (torchrun --nproc_per_node N ... --launcher pytorch);
# a collective waits at most `timeout` seconds for a rank that stopped
# answering (a dead rank's closed connection is noticed at once).
env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork'),
    dist_cfg=dict(backend='gloo', timeout=600))
auto_scale_lr = dict(base_batch_size=64)
