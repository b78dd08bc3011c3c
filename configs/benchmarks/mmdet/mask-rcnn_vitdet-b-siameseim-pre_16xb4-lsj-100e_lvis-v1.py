# SiameseIM ViT-B/16 fine-tuned as ViTDet Mask R-CNN on LVIS v1 (paper
# Tab. 2(c) and appendix Tab. "Hyper-parameters for LVIS detection"): the
# COCO recipe with peak lr 2e-4, repeat-factor sampling, 1203 classes, and
# ViTDet's LVIS test settings (score > 0.02, up to 300 detections).
_base_ = [
    './_base_/mask-rcnn_vitdet-b_simplefpn.py',
    './_base_/lvis-v1-instance_lsj-1024.py',
    './_base_/schedule_adamw-layer-decay_step-100e.py',
    'mmdet::_base_/default_runtime.py',
]

model = dict(
    roi_head=dict(
        bbox_head=dict(num_classes=1203), mask_head=dict(num_classes=1203)),
    test_cfg=dict(rcnn=dict(score_thr=0.02, max_per_img=300)))

optim_wrapper = dict(optimizer=dict(lr=2e-4))

# FaultTolerantRunner (mmsiameseim): checkpoints written atomically, a
# checkpoint and exit 128+signal on SIGTERM / SIGUSR1, resume checks, no
# silent overwrite (docs/pretraining/resume_and_preemption.md)
runner_type = 'FaultTolerantRunner'

default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=3))
# Stops before the first step, naming the options, when the heads'
# num_classes is not the dataset's class count.
custom_hooks = [dict(type='mmpretrain.ClassCountCheckHook')]
