# The Fashion-MNIST pretraining config shrunk for the training-fault tests
# (tests/test_engine): a 32-wide, 2-block ViT with a 1-block projector and
# predictor; 8 images a batch, 40 images (5 iterations an epoch), no worker
# processes, fp32, every iteration logged, an iteration checkpoint every 2
# iterations, no online kNN. Everything else (runner, loop, schedules,
# hooks) is the demo config's.
_base_ = ['../../../configs/pretrain/'
          'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

embed_dims = 32  # the base's variable, kept true to the model
model = dict(
    backbone=dict(arch=dict(_delete_=True, embed_dims=embed_dims,
                            num_layers=2, num_heads=2,
                            feedforward_channels=embed_dims * 2)),
    neck=dict(in_channels=embed_dims, embed_dims=embed_dims,
              projector_depth=1,
              predictor_depth=1, num_heads=2))
train_dataloader = dict(batch_size=8, num_workers=0, persistent_workers=False,
                        dataset=dict(indices=40))
# fp32: mmengine's plain OptimWrapper, the demo's optimizer and clipping
optim_wrapper = dict(
    _delete_=True, type='OptimWrapper',
    optimizer={{_base_.optim_wrapper.optimizer}},
    clip_grad={{_base_.optim_wrapper.clip_grad}},
    paramwise_cfg={{_base_.optim_wrapper.paramwise_cfg}})
default_hooks = dict(logger=dict(interval=1))
custom_hooks = [
    dict(type='StopOnNonFiniteLossHook', interval=1),
    dict(type='CheckpointHook', by_epoch=False, interval=2, save_last=False,
         max_keep_ckpts=2),
]
