# 1 % few-shot ImageNet-1k (paper Tab. 2(a) "1%", appendix "Finetuning with
# 1% Data", following MSN): frozen ViT-B/16 features of the SimCLR 1 %
# subset of the training set (~13 images per class) and of the validation
# set, then L2-regularised logistic regression. Not a Runner config: run
#   python tools/evaluation/fewshot_eval.py THIS_CONFIG --checkpoint CKPT
# (see docs/fewshot_1percent.md). Features: the cls token of the last block,
# no final norm (SiameseIM pretrains without one), as MSN's protocol uses
# the cls token; images resized to 256 (short side) and centre-cropped to
# 224, as in MSN's script.
default_scope = 'mmpretrain'
custom_imports = dict(imports=['mmsiameseim'], allow_failed_imports=False)

data_root = 'data/imagenet/'
# SimCLR's imagenet_subsets/1percent.txt, relative to data_root
subset_file = '1percent.txt'

model = dict(
    type='ImageClassifier',
    data_preprocessor=dict(
        type='ClsDataPreprocessor',
        num_classes=1000,
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        to_rgb=True),
    backbone=dict(
        type='VisionTransformer',
        arch='base',
        img_size=224,
        patch_size=16,
        final_norm=False,
        out_type='cls_token',
        # scope mmsiameseim: a checkpoint without the backbone's weights
        # is refused (mmengine's Pretrained would load it and go on)
        init_cfg=dict(
            type='Pretrained',
            _scope_='mmsiameseim',
            checkpoint='',
            prefix='backbone.')),
    neck=None,
    head=None)

# No augmentation for either split: features are extracted once.
test_pipeline = [
    dict(type='StrictLoadImageFromFile'),
    dict(
        type='ResizeEdge',
        scale=256,
        edge='short',
        backend='pillow',
        interpolation='bilinear'),
    dict(type='CenterCrop', crop_size=224),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=128,
    dataset=dict(
        type='ImageNetSubset',
        data_root=data_root,
        data_prefix='train',
        subset_file=subset_file,
        pipeline=test_pipeline))
test_dataloader = dict(
    batch_size=128,
    dataset=dict(
        type='ImageNet',
        data_root=data_root,
        split='val',
        pipeline=test_pipeline))

# Classifier: sklearn's multinomial LogisticRegression on l2-normalised
# features; C (inverse strength, C = 1 / (lambda * n_train)) is chosen by
# stratified k-fold cross-validation on the 1 % images only, then refit on
# all of them and scored on the validation set. MSN passes cyanure
# lambda = 2.5e-4 / n_train, i.e. C = 4000 under a (1/n) sum(loss) +
# lambda/2 |w|^2 objective; the grid brackets it.
fewshot_cfg = dict(c_grid=[1, 10, 100, 1000, 4000], cv_folds=3)
