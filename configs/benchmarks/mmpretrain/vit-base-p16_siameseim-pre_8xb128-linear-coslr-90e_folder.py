# Linear probe of a frozen SiameseIM-pretrained ViT-B/16 on your own
# labelled images: the ImageNet linear-probe recipe (BatchNorm without
# affine + a linear classifier, LARS, 10 warm-up epochs + cosine, 90 epochs)
# at a batch of 1024 = 8 GPUs x 128, lr 3.2 scaled linearly from 16384 to
# 0.2, on a folder with one sub-folder per class in each split
# (LabelledImageFolder, docs/using_a_backbone.md):
#
#   DIR/train/<class>/**/<image>    DIR/val/<class>/**/<image>
#
#   mim train mmsiameseim <this config> --cfg-options \
#       model.backbone.init_cfg.checkpoint=PRETRAINING.pth data_root=DIR \
#       model.head.num_classes=N model.data_preprocessor.num_classes=N
#
# (data_root=DIR sets both splits' root, with the plugin's tools/train.py
# or mim train mmsiameseim; with mim train mmpretrain, set
# train_dataloader.dataset.data_root and val_dataloader.dataset.data_root)
#
# The classes are train/'s sub-folders, for both splits. ClassCountCheckHook
# stops before the first step, naming both options, when N is not their
# number. Accuracy is top-1 (top-5 needs 5 classes or more: add
# "val_evaluator.topk=(1,5)"). Other batches: --auto-scale-lr. No test
# split: the val split is the score.
_base_ = './vit-base-p16_siameseim-pre_8xb2048-linear-coslr-90e_in1k.py'

train_dataloader = dict(
    batch_size=128,
    dataset=dict(type='LabelledImageFolder', data_root=None, split='train'))
val_dataloader = dict(
    batch_size=128,
    dataset=dict(type='LabelledImageFolder', data_root=None, split='val'))
val_evaluator = dict(type='Accuracy', topk=(1, ))
test_dataloader = None
test_evaluator = None
test_cfg = None
optim_wrapper = dict(optimizer=dict(lr=0.2))
auto_scale_lr = dict(base_batch_size=1024)
custom_hooks = [dict(type='ClassCountCheckHook')]
# the plugin's epoch loop: a folder too small for one batch of each rank
# (drop_last) is refused naming the folder, its size and the batch, before
# mmengine's "epoch_length must be a positive integer"
train_cfg = dict(
    _delete_=True,
    type='ExactResumeEpochBasedTrainLoop',
    max_epochs=90,
    val_interval=1)
