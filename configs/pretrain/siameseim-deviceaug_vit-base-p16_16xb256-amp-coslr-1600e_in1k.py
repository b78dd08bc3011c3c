# The accelerator option of the ImageNet pipeline: the CPU workers decode,
# crop and resize each view to 224 (Pillow, antialiased bicubic: the
# authors' crops) and draw the mask; the flips and the colour work (jitter,
# grayscale, blur, solarize) run batched on the GPU in the data
# preprocessor, with the CPU pipeline's distributions and Pillow formulas
# (DeviceAugmentDataPreprocessor; a flip there updates the recorded flips).
# For hosts with few CPU cores per GPU; docs/data_pipeline.md. Everything
# else is the default 1600-epoch config.
_base_ = [
    '_base_/siameseim_vit-base-p16.py',
    '_base_/imagenet_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]

max_epochs = 1600
# the base's warm-up (40 epochs) and cosine, which ends with max_epochs
train_cfg = dict(max_epochs=max_epochs)

# the authors' per-view colour settings (DataAugmentationForSIM); view b
# differs only in its blur and solarize probabilities
device_view_a = dict(
    jitter_prob=0.8,
    brightness=0.4,
    contrast=0.4,
    saturation=0.2,
    hue=0.1,
    grayscale_prob=0.2,
    blur_prob=1.0,
    blur_sigma=(0.1, 2.0),
    solarize_prob=0.)
device_view_b = dict(device_view_a, blur_prob=0.1, solarize_prob=0.2)
model = dict(
    data_preprocessor=dict(
        _delete_=True,
        type='DeviceAugmentDataPreprocessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        to_rgb=True,
        flip_prob=0.5,
        view_a=device_view_a,
        view_b=device_view_b))
train_dataloader = dict(
    dataset=dict(pipeline=[
        {{_base_.load_image}},
        # flips happen on the device (recorded there)
        dict(
            type='TwoViewRandomResizedCrop',
            size={{_base_.img_size}},
            scale=(0.08, 1.0),
            ratio=(3. / 4., 4. / 3.),
            flip_prob=0.,
            interpolation='bicubic',
            backend='pillow'),
        {{_base_.blockwise_mask}},
        {{_base_.pack_inputs}},
    ]))
