# SiameseIM ViT-B/16 pretraining on your own images: any folder, searched
# recursively, no labels (docs/pretraining/own_images.md). Everything but the
# dataset is the ImageNet config's: 400 epochs, batch 4096 over 16 GPUs
# (lr scaled linearly from 1e-3 at 4096 through auto_scale_lr), AMP.
#
#   mim train mmpretrain <this config> \
#       --cfg-options train_dataloader.dataset.data_root=/path/to/images
_base_ = 'siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'

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

# A labelled folder (one sub-folder per class) can feed OnlineKNNHook: see
# docs/pretraining/own_images.md, "Watching a kNN curve".
