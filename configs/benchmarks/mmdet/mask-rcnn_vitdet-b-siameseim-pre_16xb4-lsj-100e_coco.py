# SiameseIM ViT-B/16 fine-tuned as ViTDet Mask R-CNN on COCO 2017 (paper
# Tab. 2(b) and appendix Tab. "Hyper-parameters for COCO detection").
# Pass the pretraining checkpoint with
#   --cfg-options model.backbone.init_cfg.checkpoint=PATH
_base_ = [
    './_base_/mask-rcnn_vitdet-b_simplefpn.py',
    './_base_/coco-instance_lsj-1024.py',
    './_base_/schedule_adamw-layer-decay_step-100e.py',
    'mmdet::_base_/default_runtime.py',
]

# FaultTolerantRunner (mmsiameseim): checkpoints written atomically, a
# checkpoint and exit 128+signal on SIGTERM / SIGUSR1, resume checks, no
# silent overwrite (docs/pretraining/resume_and_preemption.md)
runner_type = 'FaultTolerantRunner'

default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=3))
# Stops before the first step, naming the options, when the heads'
# num_classes is not the dataset's class count.
custom_hooks = [dict(type='mmpretrain.ClassCountCheckHook')]
