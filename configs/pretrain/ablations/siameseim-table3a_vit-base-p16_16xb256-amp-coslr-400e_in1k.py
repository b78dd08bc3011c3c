_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (a): pixel target, same view, no colour aug,
# random mask, LN in projector & decoder, mae-like loss norm, dense loss.
model = dict(
    target_type='pixel',
    neck=dict(out_channels=16 * 16 * 3,  # pixels of a 16x16 RGB patch
              norm_cfg=dict(_delete_=True, type='LN', eps=1e-6)))
train_dataloader = dict(dataset=dict(pipeline=[
    dict(type='StrictLoadImageFromFile'),
    dict(type='TwoViewRandomResizedCrop', size={{_base_.img_size}},
         same_view=True, backend='pillow'),
    dict(type='RandomPatchMaskGenerator', input_size={{_base_.patch_grid}},
         num_masking_patches=118),
    {{_base_.pack_inputs}},
]))
