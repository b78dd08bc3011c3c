# Settings of the accumulation study (issue "fits the GPUs people have"):
# what a user with fewer images per device gets from each way of shrinking
# the demo's batch of 64, on the demo's budget (1 epoch), three seeds each,
# scored like the claim study (kNN, linear probe, 1 % few-shot, dense probe)
# beside the floors (each run's initial weights, raw pixels).
#
#     python projects/claim/tools/claim_study.py \
#         --config projects/accumulation/configs/accumulation_study.py \
#         --results-name accumulation_study --only table \
#         --work-dir work_dirs/accumulation_study
#
# Rendered in docs/pretraining/memory.md ("Evidence in miniature").
_base_ = ['../../claim/configs/claim_study.py']
# the dense probe, the pixel floors and the kNN bank are the claim study's
# (claim_study.py): the scattered mosaics, on which pretraining shows

pretrain_configs = {
    'siameseim-microbatch4':
    'configs/pretrain/accumulation/'
    'siameseim-microbatch4_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py',
    'siameseim-accum4':
    'configs/pretrain/accumulation/'
    'siameseim-accum4_vit-tiny-p4_1xb16-bf16-coslr-1e_fashionmnist.py',
    'siameseim-bs16-lr-scaled':
    'configs/pretrain/accumulation/'
    'siameseim_vit-tiny-p4_1xb16-bf16-lr2.5e-4-coslr-1e_fashionmnist.py',
}
# batch 64; 4 x 16 exact (model.micro_batches=4); 4 x 16 plain
# (optim_wrapper.accumulative_counts=4); batch 16 with lr / 4
methods = [
    'siameseim', 'siameseim-microbatch4', 'siameseim-accum4',
    'siameseim-bs16-lr-scaled'
]
seeds = [0, 1, 2]
# each config's own lr and weight decay and the mean of the patch tokens:
# no search, no equal-time row, no curve (the claim study's phases)
search = None
equal_time = None
curve = dict(_delete_=True)
features = dict(_delete_=True, **{m: 'avg_featmap' for m in methods})
