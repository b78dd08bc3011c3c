_base_ = [
    # the data inherits the model (_base_/siameseim_vit-base-p16.py): the
    # crop and the mask take its patch grid
    '_base_/imagenet_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]
