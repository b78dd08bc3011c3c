# The demo's pretraining at a quarter of its batch: batches of 16, one
# optimizer step each, the lr scaled linearly with the batch (1e-3 * 16 / 64);
# four times the steps of the base config in the same epoch.
_base_ = ['../siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=2.5e-4))
