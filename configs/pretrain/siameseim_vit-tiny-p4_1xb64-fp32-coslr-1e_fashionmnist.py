# The CPU demo config in plain fp32: mmengine's OptimWrapper, no autocast
# (for CPUs without native bf16, where bf16 autocast is emulated and slow).
# Everything else is siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py.
_base_ = './siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    constructor={{_base_.optim_wrapper.constructor}},
    optimizer={{_base_.optim_wrapper.optimizer}},
    clip_grad={{_base_.optim_wrapper.clip_grad}},
    paramwise_cfg={{_base_.optim_wrapper.paramwise_cfg}})
