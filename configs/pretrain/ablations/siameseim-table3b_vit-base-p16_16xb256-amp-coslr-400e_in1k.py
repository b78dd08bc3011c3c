_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (b): feature target, same view, no colour aug,
# random mask, LN in projector & decoder, moco-like loss norm, dense loss.
model = dict(
    neck=dict(norm_cfg=dict(_delete_=True, type='LN', eps=1e-6)),
    head=dict(loss=dict(target_norm='moco-like')))
train_dataloader = dict(dataset=dict(pipeline=[
    dict(type='StrictLoadImageFromFile'),
    dict(type='TwoViewRandomResizedCrop', size={{_base_.img_size}},
         same_view=True, backend='pillow'),
    dict(type='RandomPatchMaskGenerator', input_size={{_base_.patch_grid}},
         num_masking_patches=118),
    {{_base_.pack_inputs}},
]))
