# ImageNet-1k, two views per image (MoCo-v3 augmentations), blockwise mask
# of 118 / 196 patches on view a. Set data_root to your ImageNet folder
# (train/ with one sub-folder per class). The crop size and the mask's grid
# must be the model's (img_size, patch_grid of siameseim_vit-base-p16.py,
# a sibling base): the batch-geometry check refuses a batch off the model's
# patch grid before the first step, whichever loop runs.
crop_size = 224
mask_grid = 14  # crop_size // patch size 16

dataset_type = 'ImageNet'
data_root = 'data/imagenet/'

# The authors' colour set (their DataAugmentationForSIM, torchvision on
# PIL), with Pillow's formulas computed on the arrays (FastColorJitter,
# FastRandomGrayscale, FastGaussianBlur: docs/data_pipeline.md gives their
# tolerance against Pillow).
colour_jitter = dict(
    type='RandomApply',
    transforms=[
        dict(
            type='FastColorJitter',
            brightness=0.4,
            contrast=0.4,
            saturation=0.2,
            hue=0.1)
    ],
    prob=0.8)
grayscale = dict(type='FastRandomGrayscale', prob=0.2)
view_a_pipeline = [
    colour_jitter,
    grayscale,
    dict(type='FastGaussianBlur', sigma=(0.1, 2.0), prob=1.0),
]
view_b_pipeline = [
    colour_jitter,
    grayscale,
    dict(type='FastGaussianBlur', sigma=(0.1, 2.0), prob=0.1),
    dict(type='Solarize', thr=128, prob=0.2),
]
# The pipeline's steps are named so that the ablation configs
# (configs/pretrain/ablations) can swap one of them.
two_view_crop = dict(
    type='TwoViewRandomResizedCrop',
    size=crop_size,
    scale=(0.08, 1.0),
    ratio=(3. / 4., 4. / 3.),
    flip_prob=0.5,
    interpolation='bicubic',
    backend='pillow')  # PIL bicubic, antialiased when shrinking: the authors'
per_view_colour = dict(
    type='PerViewTransforms', pipelines=[view_a_pipeline, view_b_pipeline])
# names corrupt/truncated files; decodes to a Pillow RGB image, which the
# crop cuts and resizes before any array conversion
load_image = dict(type='StrictLoadImageFromFile', to_pil=True)
blockwise_mask = dict(
    type='BlockwiseMaskGenerator',
    input_size=mask_grid,
    num_masking_patches=118,
    min_num_patches=16,
    fixed_count=True)
# Table 3's uniformly random mask (configs/pretrain/ablations), as many
# patches as the blockwise one
random_mask = dict(
    type='RandomPatchMaskGenerator',
    input_size=mask_grid,
    num_masking_patches=118)
pack_inputs = dict(
    type='PackInputs',
    algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'],
    meta_keys=['img_path', 'ori_shape', 'img_shape'])
train_pipeline = [
    load_image,
    two_view_crop,
    per_view_colour,
    blockwise_mask,
    pack_inputs,
]
# Workers: configs/pretrain/README.md, "Data loading" (measured per-worker
# rate, an A100-class step rate, 16 cores per GPU on an 8-GPU host).
train_dataloader = dict(
    batch_size=256,
    num_workers=16,
    persistent_workers=True,
    pin_memory=True,
    # prefetch_factor: torch's default, 2 (named here, it would make a
    # num_workers=0 debugging run fail)
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        split='train',
        pipeline=train_pipeline))
