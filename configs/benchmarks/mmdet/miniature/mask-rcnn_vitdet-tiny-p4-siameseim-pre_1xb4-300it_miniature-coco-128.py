# The COCO benchmark config fine-tuned on the miniature COCO-layout data of
#   python projects/downstream_miniature/tools/make_miniature_downstream.py
# (data/miniature: Fashion-MNIST items with exact masks) from the demo
# checkpoint of `make demo`; what changes is in _base_/ (size only).
_base_ = [
    '../mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py',
    './_base_/vitdet-tiny-p4_miniature-128.py',
]
data_root = 'data/miniature/coco/'

model = {{_base_.mini_model}}
optim_wrapper = {{_base_.mini_optim_wrapper}}
train_cfg = {{_base_.mini_train_cfg}}
param_scheduler = {{_base_.mini_param_scheduler}}
default_hooks = {{_base_.mini_default_hooks}}
log_processor = {{_base_.mini_log_processor}}

# CocoDataset selects the categories by name.
train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        metainfo=dict(classes={{_base_.mini_classes}}),
        pipeline={{_base_.mini_train_pipeline}}))
val_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        metainfo=dict(classes={{_base_.mini_classes}}),
        pipeline={{_base_.mini_test_pipeline}}))
test_dataloader = val_dataloader
val_evaluator = dict(ann_file=data_root + 'annotations/instances_val2017.json')
test_evaluator = val_evaluator
