# Full fine-tuning of a SiameseIM-pretrained ViT-B/16 on your own labelled
# images: the ImageNet fine-tuning recipe (layer decay 0.65, RandAugment,
# Mixup / CutMix, 100 epochs) on a folder with one sub-folder per class in
# each split (LabelledImageFolder, docs/using_a_backbone.md):
#
#   DIR/train/<class>/**/<image>    DIR/val/<class>/**/<image>
#
#   mim train mmpretrain <this config> --cfg-options \
#       model.backbone.init_cfg.checkpoint=PRETRAINING.pth \
#       train_dataloader.dataset.data_root=DIR \
#       val_dataloader.dataset.data_root=DIR \
#       model.head.num_classes=N model.data_preprocessor.num_classes=N
#
# The classes are train/'s sub-folders, for both splits. ClassCountCheckHook
# stops before the first step, naming both options, when N is not their
# number. Accuracy is top-1 (top-5 needs 5 classes or more: add
# "val_evaluator.topk=(1,5)"). The lr is for a total batch of 1024; other
# batches: --auto-scale-lr. No test split: the val split is the score.
_base_ = './vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py'

train_dataloader = dict(
    dataset=dict(type='LabelledImageFolder', data_root=None, split='train'))
val_dataloader = dict(
    dataset=dict(type='LabelledImageFolder', data_root=None, split='val'))
val_evaluator = dict(type='Accuracy', topk=(1, ))
test_dataloader = None
test_evaluator = None
test_cfg = None
custom_hooks = [dict(type='ClassCountCheckHook')]
