# The LVIS v1 benchmark config fine-tuned on the miniature LVIS-layout data
# (long-tailed: rare, common and frequent classes by LVIS's rule) of
#   python projects/downstream_miniature/tools/make_miniature_downstream.py
# from the demo checkpoint of `make demo`; what changes is in _base_/ (size
# only). LVIS reads the class names from the annotation file.
_base_ = [
    '../mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_lvis-v1.py',
    './_base_/vitdet-tiny-p4_miniature-128.py',
]
data_root = 'data/miniature/lvis_v1/'

model = {{_base_.mini_model}}
optim_wrapper = {{_base_.mini_optim_wrapper}}
train_cfg = {{_base_.mini_train_cfg}}
param_scheduler = {{_base_.mini_param_scheduler}}
default_hooks = {{_base_.mini_default_hooks}}
log_processor = {{_base_.mini_log_processor}}

train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(  # inside ClassBalancedDataset
        dataset=dict(
            data_root=data_root, pipeline={{_base_.mini_train_pipeline}})))
val_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, pipeline={{_base_.mini_test_pipeline}}))
test_dataloader = val_dataloader
val_evaluator = dict(ann_file=data_root + 'annotations/lvis_v1_val.json')
test_evaluator = val_evaluator
