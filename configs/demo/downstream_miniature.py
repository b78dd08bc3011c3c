# Settings of tools/studies/downstream_miniature.py: Table 2 in miniature.
# Each backbone is fine-tuned by the miniature configs (the shipped ViTDet
# Mask R-CNN and UperNet configs at the demo's size) with each seed, on the
# data of tools/dataset_converters/make_miniature_downstream.py; each
# pretrained backbone is compared with its own initial weights (`baseline`)
# by a Welch t-test over the seeds, Holm-corrected over every comparison.

# task -> the miniature config, the metrics of the table (keys of the
# config's evaluator) and, for --holdout, the options that fit on
# *_fit and evaluate on *_holdout (the schedule is chosen there, never on
# the validation split).
tasks = dict(
    coco=dict(
        config='configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-'
        'siameseim-pre_1xb4-300it_miniature-coco-128.py',
        metrics=['coco/bbox_mAP', 'coco/segm_mAP'],
        holdout_options={
            'train_dataloader.dataset.ann_file':
            'annotations/instances_train2017_fit.json',
            'val_dataloader.dataset.ann_file':
            'annotations/instances_train2017_holdout.json',
            'val_dataloader.dataset.data_prefix.img':
            'train2017/',
            'val_evaluator.ann_file':
            'data/miniature/coco/annotations/instances_train2017_holdout.json',
        }),
    lvis=dict(
        config='configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-'
        'siameseim-pre_1xb4-300it_miniature-lvis-v1-128.py',
        metrics=[
            'lvis/bbox_AP', 'lvis/bbox_APr', 'lvis/segm_AP', 'lvis/segm_APr'
        ],
        holdout_options={
            'train_dataloader.dataset.dataset.ann_file':
            'annotations/lvis_v1_train_fit.json',
            'val_dataloader.dataset.ann_file':
            'annotations/lvis_v1_train_holdout.json',
            'val_evaluator.ann_file':
            'data/miniature/lvis_v1/annotations/lvis_v1_train_holdout.json',
        }),
    ade20k=dict(
        config='configs/benchmarks/mmseg/miniature/upernet_vit-tiny-p4-'
        'siameseim-pre_1xb8-600it_miniature-ade20k-128x128.py',
        metrics=['mIoU'],
        holdout_options={
            'train_dataloader.dataset.ann_file':
            'fit.txt',
            'val_dataloader.dataset.ann_file':
            'holdout.txt',
            'val_dataloader.dataset.data_prefix.img_path':
            'images/training',
            'val_dataloader.dataset.data_prefix.seg_map_path':
            'annotations/training',
        }),
)

# backbone -> its checkpoint (None: the ViT at its random initialisation)
# and the backbone it is judged against. The pretrainings are the claim
# study's (tools/studies/claim_study.py, work_dirs/claim: the demo's
# SiameseIM and mmpretrain's MAE and MoCo-v3 at the same budget, seed 0),
# each beside the initial weights its run saved.
_claim = 'work_dirs/claim/{}_seed0_1e/'
backbones = dict(
    siameseim=dict(
        checkpoint=_claim.format('siameseim') + 'epoch_1.pth',
        baseline='siameseim_init'),
    siameseim_init=dict(
        checkpoint=_claim.format('siameseim') + 'initial_weights.pth'),
    mae=dict(
        checkpoint=_claim.format('mae') + 'epoch_1.pth', baseline='mae_init'),
    mae_init=dict(checkpoint=_claim.format('mae') + 'initial_weights.pth'),
    mocov3=dict(
        checkpoint=_claim.format('mocov3') + 'epoch_1.pth',
        baseline='mocov3_init'),
    mocov3_init=dict(
        checkpoint=_claim.format('mocov3') + 'initial_weights.pth'),
    random=dict(checkpoint=None),
)
seeds = [0, 1, 2]
# a fine-tune (training and its evaluation) should end within this
budget_minutes = 15
