# SiameseIM ViT-B/16 pretraining on your own images: any folder, searched
# recursively, no labels (docs/pretraining/own_images.md). Everything but the
# dataset is the ImageNet 400-epoch config's: 400 epochs, batch 4096 over 16
# GPUs (lr scaled linearly from 1e-3 at 4096 through auto_scale_lr), AMP.
#
#   mim train mmpretrain <this config> \
#       --cfg-options train_dataloader.dataset.data_root=/path/to/images
_base_ = [
    '_base_/siameseim_vit-base-p16.py',
    '_base_/image_folder_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]

# A labelled folder (one sub-folder per class) can feed OnlineKNNHook: see
# docs/pretraining/own_images.md, "Watching a kNN curve".
