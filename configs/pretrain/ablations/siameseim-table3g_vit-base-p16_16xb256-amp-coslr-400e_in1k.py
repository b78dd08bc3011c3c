_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (g): feature target, different views, colour aug,
# random mask, BN in projector & decoder, moco-like loss norm, dense loss.
model = dict(
    head=dict(loss=dict(target_norm='moco-like')))
train_dataloader = dict(dataset=dict(pipeline=[
    dict(type='StrictLoadImageFromFile'),
    {{_base_.two_view_crop}},
    {{_base_.per_view_colour}},
    dict(type='RandomPatchMaskGenerator', input_size={{_base_.patch_grid}},
         num_masking_patches=118),
    {{_base_.pack_inputs}},
]))
