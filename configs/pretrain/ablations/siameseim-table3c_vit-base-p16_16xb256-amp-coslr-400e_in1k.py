_base_ = [
    '../_base_/siameseim_vit-base-p16.py',
    '../_base_/imagenet_two_view_masked.py',
    '../_base_/adamw_coslr_400e.py',
    '../_base_/runtime.py',
]
# Table 3, row (c): the settings of the row, written out for `mim train`;
# projects.table3.read_row reads its switches off them and
# apply_table3_row applies them to the Fashion-MNIST miniature
# (tests/test_configs/test_table3_ablations.py checks they are the
# paper's).
model = dict(
    target_type='pixel',
    neck=dict(
        out_channels=16 * 16 * 3,  # pixels of a 16x16 RGB patch
        norm_cfg=dict(_delete_=True, type='LN', eps=1e-6)))
train_dataloader = dict(
    dataset=dict(pipeline=[
        {{_base_.load_image}},
        dict(
            type='TwoViewRandomResizedCrop',
            size={{_base_.img_size}},
            same_view=True,
            backend='pillow'),
        dict(
            type='PerViewTransforms',
            shared=True,
            pipelines=[{{_base_.view_a_pipeline}}]),
        {{_base_.random_mask}},
        {{_base_.pack_inputs}},
    ]))
