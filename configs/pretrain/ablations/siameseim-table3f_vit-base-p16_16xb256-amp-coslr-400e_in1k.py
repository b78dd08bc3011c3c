_base_ = [
    '../_base_/siameseim_vit-base-p16.py',
    '../_base_/imagenet_two_view_masked.py',
    '../_base_/adamw_coslr_400e.py',
    '../_base_/runtime.py',
]
# Table 3, row (f): the settings of the row, written out for `mim train`;
# projects.table3.read_row reads its switches off them and
# apply_table3_row applies them to the Fashion-MNIST miniature
# (tests/test_configs/test_table3_ablations.py checks they are the
# paper's).
model = dict(
    neck=dict(norm_cfg=dict(_delete_=True, type='LN', eps=1e-6)),
    head=dict(loss=dict(target_norm='moco-like')))
train_dataloader = dict(
    dataset=dict(pipeline=[
        {{_base_.load_image}},
        {{_base_.two_view_crop}},
        {{_base_.per_view_colour}},
        {{_base_.random_mask}},
        {{_base_.pack_inputs}},
    ]))
