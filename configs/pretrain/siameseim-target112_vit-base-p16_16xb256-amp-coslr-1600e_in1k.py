# The efficient target option (the paper's "Limitations" remedy, not in the
# paper's results): view b is cropped to 112 px, so the target branch
# encodes 7 x 7 = 49 tokens instead of 196 and the predictor predicts that
# grid (its relative positions still place each of view b's patches in
# view a). Everything else is the default 1600-epoch config.
_base_ = [
    '_base_/siameseim_vit-base-p16.py',
    '_base_/imagenet_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]

max_epochs = 1600
# the base's warm-up (40 epochs) and cosine, which ends with max_epochs
train_cfg = dict(max_epochs=max_epochs)

target_size = 112
# (`_base_.x` rather than `{{_base_.x}}` where the value takes arithmetic)
model = dict(neck=dict(target_grid_size=target_size // _base_.patch_size))
train_dataloader = dict(
    dataset=dict(pipeline=[
        {{_base_.load_image}},
        dict(
            type='TwoViewRandomResizedCrop',
            size={{_base_.img_size}},
            target_size=target_size,
            backend='pillow'),
        {{_base_.per_view_colour}},
        {{_base_.blockwise_mask}},
        {{_base_.pack_inputs}},
    ]))

# Online kNN during pretraining: see the commented OnlineKNNHook example in
# siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py.
