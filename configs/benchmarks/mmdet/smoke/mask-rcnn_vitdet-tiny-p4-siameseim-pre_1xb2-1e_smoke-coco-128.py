# CPU smoke run of the COCO benchmark config on the generated data of
#   python tools/dataset_converters/make_smoke_coco_lvis.py \
#       --out data/smoke_det
# from the demo checkpoint of `make demo` (see _base_/ for what changes).
_base_ = [
    '../mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py',
    './_base_/vitdet-tiny-p4_cpu-128.py',
]
data_root = 'data/smoke_det/coco/'

model = {{_base_.smoke_model}}
optim_wrapper = {{_base_.smoke_optim_wrapper}}
train_cfg = {{_base_.smoke_schedule}}
default_hooks = dict(logger=dict(interval=1))

# CocoDataset selects the categories by name.
train_dataloader = dict(
    batch_size=2,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        metainfo=dict(classes={{_base_.smoke_classes}}),
        pipeline={{_base_.smoke_train_pipeline}}))
val_dataloader = dict(
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        data_root=data_root,
        metainfo=dict(classes={{_base_.smoke_classes}}),
        pipeline={{_base_.smoke_test_pipeline}}))
test_dataloader = val_dataloader
val_evaluator = dict(ann_file=data_root + 'annotations/instances_val2017.json')
test_evaluator = val_evaluator
