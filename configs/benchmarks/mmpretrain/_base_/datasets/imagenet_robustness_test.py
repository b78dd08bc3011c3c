# Shared pieces of the robustness test sets (paper Tab. 2(d)). All of them
# label images with ImageNet-1k indices read from the training list the
# classifier was trained with.
class_map_ann_file = 'data/imagenet/meta/train.txt'
# A, R, Sketch: the ImageNet validation transform (short edge 256, centre
# crop 224), as Hendrycks et al.'s ImageNet-R evaluation.
robustness_test_pipeline = [
    dict(type='StrictLoadImageFromFile'),
    dict(
        type='ResizeEdge',
        scale=256,
        edge='short',
        backend='pillow',
        interpolation='bicubic'),
    dict(type='CenterCrop', crop_size=224),
    dict(type='PackInputs'),
]
