# The efficient target option on the CPU demo: view b is cropped to 16 px,
# so the target branch encodes 4 x 4 = 16 tokens instead of 64 and the
# predictor predicts that grid. Everything else is the demo config.
_base_ = './siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'

target_size = 16
# (`_base_.x` rather than `{{_base_.x}}` where the value takes arithmetic)
model = dict(neck=dict(target_grid_size=target_size // _base_.patch_size))
train_dataloader = dict(
    dataset=dict(pipeline=[
        dict(type='Pad', size=(_base_.img_size, _base_.img_size), pad_val=0),
        dict(
            type='TwoViewRandomResizedCrop',
            size={{_base_.img_size}},
            target_size=target_size,
            scale=(0.25, 1.0),
            flip_prob=0.5,
            interpolation='bicubic'),
        dict(
            type='PerViewTransforms',
            pipelines=[{{_base_.view_a_pipeline}}, {{_base_.view_b_pipeline}}
                       ]),
        dict(
            type='BlockwiseMaskGenerator',
            input_size={{_base_.patch_grid}},
            num_masking_patches=38,
            min_num_patches=4,
            fixed_count=True),
        dict(
            type='PackInputs',
            algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'],
            meta_keys=['ori_shape', 'img_shape']),
    ]))
