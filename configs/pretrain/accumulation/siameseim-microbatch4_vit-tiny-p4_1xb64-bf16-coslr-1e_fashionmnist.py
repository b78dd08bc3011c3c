# The demo's pretraining with exact gradient accumulation: each batch of 64
# is trained as 4 parts of 16 (one part's activations at a time), the UniGrad
# correlation taken over all 64 images; the neck's BatchNorm statistics are
# per part (docs/pretraining/memory.md). One optimizer step per batch of 64,
# as in the base config.
_base_ = ['../siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py']

model = dict(micro_batches=4)
