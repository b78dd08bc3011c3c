# Your own images: every image under a folder, recursively, no labels
# (UnlabeledImageFolder, docs/pretraining/own_images.md), with the ImageNet
# data base's two views, augmentations and blockwise mask.
_base_ = 'imagenet_two_view_masked.py'

train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='UnlabeledImageFolder',
        # required: --cfg-options train_dataloader.dataset.data_root=DIR
        data_root=None,
        # .jpg .jpeg .png .bmp .webp .tif .tiff, any case; any image mode
        # and bit depth (StrictLoadImageFromFile)
        pipeline={{_base_.train_pipeline}},
        # Damaged-file policy: a file that cannot be read is skipped and
        # named in the log; the run stops, naming the files, once more than
        # this share of the images read are damaged (and at least
        # min_damaged). max_damaged_fraction=0. with min_damaged=1 stops at
        # the first one.
        max_damaged_fraction=0.01,
        min_damaged=10,
        # 'header' (or 'decode': whole images) checks every file before
        # training and leaves the damaged ones out
        verify=False))
