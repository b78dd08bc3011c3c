_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (f): the override (mmsiameseim_lab.table3.apply_table3_row
# applies it to this base and to the Fashion-MNIST miniature); the
# settings below are what it sets here, written out for `mim train`
# (tests/test_configs/test_table3_ablations.py checks they agree).
table3_row = dict(
    target='feature',
    views='different',
    colour=True,
    mask='random',
    norm='LN',
    loss_norm='moco-like',
    loss='dense')
model = dict(
    neck=dict(norm_cfg=dict(_delete_=True, type='LN', eps=1e-6)),
    head=dict(loss=dict(target_norm='moco-like')))
train_dataloader = dict(
    dataset=dict(pipeline=[
        {{_base_.load_image}},
        {{_base_.two_view_crop}},
        {{_base_.per_view_colour}},
        dict(
            type='RandomPatchMaskGenerator',
            input_size={{_base_.patch_grid}},
            num_masking_patches=118),
        {{_base_.pack_inputs}},
    ]))
