# The demo's pretraining with mmengine's plain gradient accumulation: batches
# of 16, 4 of them summed into one optimizer step (an effective batch of 64
# at the base config's lr). The UniGrad correlation and the neck's BatchNorm
# statistics are each over 16 images, and the momentum target is updated
# after every batch of 16: what `accumulative_counts` alone gives SiameseIM.
_base_ = ['../siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(accumulative_counts=4)
