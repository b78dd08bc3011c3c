# ImageNet-C 1 - mCE (paper Tab. 2(d)) of a model fine-tuned with
# vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py (appendix: tested
# without further training). 15 corruptions x 5 severities.
#   mim test mmpretrain <this config> --checkpoint <fine-tuned .pth>
# Data: data/imagenet-c/<corruption>/<1..5>/<wnid>/*.JPEG and
# data/imagenet/meta/train.txt.
_base_ = [
    './vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py',
    './_base_/datasets/imagenet_robustness_test.py',
]
model = dict(backbone=dict(init_cfg=None))

# The ImageNet-C images are 224 x 224 already; Hendrycks & Dietterich's
# evaluation only centre-crops 224.
test_pipeline = [
    dict(type='StrictLoadImageFromFile'),
    dict(type='CenterCrop', crop_size=224),
    dict(
        type='PackInputs',
        meta_keys=('sample_idx', 'img_path', 'ori_shape', 'img_shape',
                   'corruption', 'severity')),
]
test_dataloader = dict(
    _delete_=True,
    batch_size=256,
    num_workers=8,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type='ImageNetC',
        data_root='data/imagenet-c',
        class_map_ann_file={{_base_.class_map_ann_file}},
        pipeline=test_pipeline))
# AlexNet top-1 errors averaged over the 5 severities: published constants
# of the ImageNet-C benchmark (Hendrycks & Dietterich, "Benchmarking Neural
# Network Robustness to Common Corruptions and Perturbations", ICLR 2019;
# the values used in github.com/hendrycks/robustness, e.g. AugMix's
# imagenet.py ALEXNET_ERR).
test_evaluator = dict(
    _delete_=True,
    type='ImageNetCorruptionError',
    alexnet_errors=dict(
        gaussian_noise=0.886428,
        shot_noise=0.894468,
        impulse_noise=0.922640,
        defocus_blur=0.819880,
        glass_blur=0.826268,
        motion_blur=0.785948,
        zoom_blur=0.798360,
        snow=0.866816,
        frost=0.826572,
        fog=0.819324,
        brightness=0.564592,
        contrast=0.853204,
        elastic_transform=0.646056,
        pixelate=0.717840,
        jpeg_compression=0.606500))
