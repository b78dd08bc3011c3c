# LVIS v1 instance segmentation with LSJ at 1024 (as the COCO base),
# repeat-factor sampling (threshold 1e-3, as ViTDet / LVIS) and the LVIS
# metric (AP, AP_r / AP_c / AP_f). Images are the COCO 2017 ones, found via
# each image's ``coco_url`` (train2017/ or val2017/ under data_root).
# CheckedLVISV1Dataset: mmdet's LVISV1Dataset with the annotation checks of
# CheckedCocoDataset and the file's categories as its classes.
_base_ = './coco-instance_lsj-1024.py'

dataset_type = 'CheckedLVISV1Dataset'
data_root = 'data/lvis_v1/'

train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='ClassBalancedDataset',
        oversample_thr=1e-3,
        dataset=dict(
            type=dataset_type,
            data_root=data_root,
            ann_file='annotations/lvis_v1_train.json',
            data_prefix=dict(img=''),
            filter_cfg=dict(filter_empty_gt=True, min_size=32),
            pipeline={{_base_.train_pipeline}})))
val_dataloader = dict(
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/lvis_v1_val.json',
        data_prefix=dict(img='')))
test_dataloader = val_dataloader

# mmdet's LVISMetric run with the numpy aliases lvis==0.5.3 needs.
val_evaluator = dict(
    _delete_=True,
    type='NumpyAliasLVISMetric',
    ann_file=data_root + 'annotations/lvis_v1_val.json',
    metric=['bbox', 'segm'])
test_evaluator = val_evaluator
