import os.path as osp
from typing import List, Optional

import numpy as np
from mmengine.logging import MMLogger
from mmseg.datasets import BaseSegDataset
from mmseg.registry import DATASETS
from PIL import Image

from ..datasets.image_folder_files import list_image_files

_ORIENTATION = 0x0112  # the EXIF tag
_TRANSPOSING = (5, 6, 7, 8)  # orientations that swap width and height


def read_classes(path: str, owner: str) -> tuple:
    """Class names, one per line (blank lines left out); line i is mask
    value i."""
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'{owner}: no class list {path}: write one class name per line, '
            'line i for mask value i (0 first)')
    with open(path, encoding='utf-8') as f:
        classes = tuple(line.strip() for line in f if line.strip())
    if len(classes) < 2:
        raise ValueError(f'{owner}: {path} names {len(classes)} class(es); '
                         'a segmentation needs 2 or more')
    return classes


@DATASETS.register_module()
class SegmentationFolder(BaseSegDataset):
    """Your own images and masks:

    .. code-block:: text

        DATA_ROOT/classes.txt                   one class name per line
        DATA_ROOT/images/SPLIT/**/NAME.<ext>    any image extension
        DATA_ROOT/masks/SPLIT/**/NAME.png       value i = class i, 255 ignored

    Every image needs a mask of the same relative name (the mask suffix in
    place of its extension): an image without one is refused, naming it.
    With ``verify_masks`` every mask is checked against its image once when
    the dataset is built, in every split, and refused naming both files: a
    mask that is not a single-channel 8-bit image, one whose size is not
    its image's as it loads (an EXIF orientation turns the image; a
    validation mask of another size stops the metric with a bare index
    error, a training one is stretched over its image without a word), or
    a value that is neither a class nor ``ignore_index`` (it would stop the
    loss at some batch with a bare index error, or on a GPU a device
    assert).
    Each image is read once: a symbolic link to an image already listed
    (in sorted order) is left out with a warning naming it.

    Args:
        data_root (str): The folder of ``classes.txt``, ``images/`` and
            ``masks/``. Required: the configs ship without it
            (``--cfg-options train_dataloader.dataset.data_root=DIR
            val_dataloader.dataset.data_root=DIR``).
        split (str): The split's sub-folder. Defaults to 'train'.
        classes_file (str): The class list, relative to ``data_root``.
            Defaults to 'classes.txt'.
        seg_map_suffix (str): The masks' suffix. Defaults to '.png'.
        verify_masks (bool): Check every mask's mode, size and values.
            Defaults to True.
        ignore_index (int): The mask value left out of the loss and the
            metric. Defaults to 255.
        **kwargs: Other ``BaseSegDataset`` arguments (``pipeline``,
            ``indices``, ...).
    """

    def __init__(self,
                 data_root: Optional[str] = None,
                 split: str = 'train',
                 classes_file: str = 'classes.txt',
                 seg_map_suffix: str = '.png',
                 verify_masks: bool = True,
                 ignore_index: int = 255,
                 **kwargs) -> None:
        name = type(self).__name__
        if not data_root:
            raise ValueError(
                f'{name}: data_root is not set; give the folder of '
                'classes.txt, images/ and masks/, e.g. --cfg-options '
                'train_dataloader.dataset.data_root=DIR '
                'val_dataloader.dataset.data_root=DIR')
        self.split = split
        self.verify_masks = verify_masks
        classes = read_classes(osp.join(data_root, classes_file), name)
        super().__init__(
            data_root=data_root,
            metainfo=dict(classes=classes),
            seg_map_suffix=seg_map_suffix,
            reduce_zero_label=False,
            ignore_index=ignore_index,
            **kwargs)

    def load_data_list(self) -> List[dict]:
        name = type(self).__name__
        img_dir = osp.join(self.data_root, 'images', self.split)
        mask_dir = osp.join(self.data_root, 'masks', self.split)
        files = list_image_files(img_dir, what=f'{name} images').files
        if not files:
            raise FileNotFoundError(f'{name}: no image in {img_dir}')
        pairs = [(f,
                  osp.join(mask_dir,
                           osp.splitext(f)[0] + self.seg_map_suffix))
                 for f in files]
        missing = [(f, m) for f, m in pairs if not osp.isfile(m)]
        if missing:
            raise FileNotFoundError(
                f'{name}: {len(missing)} of the {len(files)} images in '
                f'{img_dir} have no mask, e.g. {missing[0][0]}: no '
                f'{missing[0][1]}')
        if self.verify_masks:
            self.check_masks([m for _, m in pairs],
                             [osp.join(img_dir, f) for f, _ in pairs])
        MMLogger.get_current_instance().info(
            f'{name}: {len(pairs)} images and masks in {img_dir}, '
            f'{len(self.metainfo["classes"])} classes')
        return [
            dict(
                img_path=osp.join(img_dir, f),
                seg_map_path=m,
                label_map=self.label_map,
                reduce_zero_label=False,
                seg_fields=[]) for f, m in pairs
        ]

    def check_masks(self, masks: List[str], images: List[str]) -> None:
        """Every mask is a single-channel 8-bit image of its image's size
        whose values are classes or ``ignore_index``."""
        count = len(self.metainfo['classes'])
        for path, image in zip(masks, images):
            with Image.open(path) as img:
                if img.mode not in ('L', 'P'):
                    raise ValueError(
                        f'{type(self).__name__}: mask {path} is a {img.mode} '
                        'image; masks are single-channel 8-bit images (grey '
                        'or palette) of class indices')
                self.check_size(path, img.size, image)
                values = np.unique(np.asarray(img))
            bad = values[(values >= count) & (values != self.ignore_index)]
            if len(bad):
                raise ValueError(
                    f'{type(self).__name__}: mask {path} holds value '
                    f'{int(bad[0])}, but classes.txt names {count} classes '
                    f'(values 0-{count - 1}) and {self.ignore_index} is '
                    'ignored; fix the mask or the class list')

    def check_size(self, mask: str, mask_size: tuple, image: str) -> None:
        """The mask is as wide and high as its image loads (mmcv's image
        loading turns an image by its EXIF orientation; a mask is read as
        stored)."""
        with Image.open(image) as img:
            size, turned = img.size, img.getexif().get(_ORIENTATION, 1)
        if turned in _TRANSPOSING:
            size = size[::-1]
        if tuple(mask_size) == tuple(size):
            return
        how = (f' (its EXIF orientation {turned} turns it; stored '
               f'{size[1]} x {size[0]})' if turned in _TRANSPOSING else '')
        raise ValueError(
            f'{type(self).__name__}: mask {mask} is {mask_size[0]} x '
            f'{mask_size[1]} (width x height), but its image {image} loads '
            f'as {size[0]} x {size[1]}{how}; a mask gives one class per '
            'pixel of its image: resize it with nearest-neighbour '
            'interpolation or fix the pairing')
