# ImageNet-R top-1 (paper Tab. 2(d)) of a model fine-tuned with
# vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py (appendix: tested
# without further training). ImageNet-R holds 200 ImageNet-1k classes: the
# 1000-way scores are restricted to the classes whose folders are present.
#   mim test mmpretrain <this config> --checkpoint <fine-tuned .pth>
# Data: data/imagenet-r/<wnid>/*.jpg and data/imagenet/meta/train.txt.
_base_ = [
    './vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py',
    './_base_/datasets/imagenet_robustness_test.py',
]
model = dict(backbone=dict(init_cfg=None))
test_dataloader = dict(
    _delete_=True,
    batch_size=128,
    num_workers=8,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type='ImageNetWnidFolder',
        data_root='data/imagenet-r',
        class_map_ann_file={{_base_.class_map_ann_file}},
        pipeline={{_base_.robustness_test_pipeline}}))
test_evaluator = dict(_delete_=True, type='ClassSubsetAccuracy')
