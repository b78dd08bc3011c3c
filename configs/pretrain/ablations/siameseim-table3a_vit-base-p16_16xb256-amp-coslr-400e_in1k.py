_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (a): the override (mmsiameseim_lab.table3.apply_table3_row
# applies it to this base and to the Fashion-MNIST miniature); the
# settings below are what it sets here, written out for `mim train`
# (tests/test_configs/test_table3_ablations.py checks they agree).
table3_row = dict(
    target='pixel',
    views='same',
    colour=False,
    mask='random',
    norm='LN',
    loss_norm='mae-like',
    loss='dense')
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
            type='RandomPatchMaskGenerator',
            input_size={{_base_.patch_grid}},
            num_masking_patches=118),
        {{_base_.pack_inputs}},
    ]))
