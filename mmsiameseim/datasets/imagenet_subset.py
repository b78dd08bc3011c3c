import os
import os.path as osp
from typing import List

from mmpretrain.datasets import ImageNet
from mmpretrain.registry import DATASETS


@DATASETS.register_module()
class ImageNetSubset(ImageNet):
    """The ImageNet training images named in a subset list.

    The list is the semi-supervised format of SimCLR's
    ``imagenet_subsets/1percent.txt`` (and ``10percent.txt``): one file
    name per line, ``<wnid>_<n>.JPEG``. The image is
    ``<data_root>/<data_prefix>/<wnid>/<file>`` and its label is the index of
    ``<wnid>`` among the sorted class folders of ``<data_prefix>``, the
    ImageNet label convention (that of mmpretrain's ``meta/val.txt``).

    Args:
        subset_file (str): The list; relative paths are taken from
            ``data_root``.
        data_root (str): The ImageNet root. Defaults to ''.
        data_prefix (str): The training image folder under ``data_root``.
            Defaults to 'train'.
        **kwargs: Other arguments of :class:`ImageNet` (``pipeline``,
            ``metainfo``...). With the default ImageNet-1k ``metainfo`` the
            folder must hold the 1000 classes; give ``metainfo=dict(
            classes=...)`` for a smaller set.

    Raises:
        FileNotFoundError: The list or any image it names is missing (the
            message names the first missing image and the count).
        ValueError: The list is empty, an entry names no class folder, or
            the folder count differs from the classes of ``metainfo``.
    """

    def __init__(self,
                 subset_file: str,
                 data_root: str = '',
                 data_prefix: str = 'train',
                 **kwargs) -> None:
        self.subset_file = subset_file
        super().__init__(
            data_root=data_root, data_prefix=data_prefix, **kwargs)

    def load_data_list(self) -> List[dict]:
        subset_file = self.subset_file
        if not osp.isabs(subset_file):
            subset_file = osp.join(self.data_root, subset_file)
        if not osp.isfile(subset_file):
            raise FileNotFoundError(f'subset list {subset_file} not found')
        if not osp.isdir(self.img_prefix):
            raise FileNotFoundError(
                f'ImageNet training folder {self.img_prefix} not found')
        with open(subset_file) as f:
            names = [line.strip() for line in f if line.strip()]
        if not names:
            raise ValueError(f'subset list {subset_file} lists no image '
                             '(one <wnid>_<n>.JPEG per line was expected)')
        wnids = sorted(
            d for d in os.listdir(self.img_prefix)
            if osp.isdir(osp.join(self.img_prefix, d)))
        if self.CLASSES is not None and len(self.CLASSES) != len(wnids):
            raise ValueError(
                f'{self.img_prefix} has {len(wnids)} class folders but the '
                f'dataset has {len(self.CLASSES)} classes; labels are the '
                'sorted folder index, so every class folder must be there '
                '(or set metainfo=dict(classes=...))')
        label = {wnid: i for i, wnid in enumerate(wnids)}
        unknown = [n for n in names if n.split('_', 1)[0] not in label]
        if unknown:
            raise ValueError(
                f'{subset_file}: {len(unknown)} entries name no class folder '
                f'of {self.img_prefix}, e.g. {unknown[:3]} (expected '
                '<wnid>_<n>.JPEG per line)')
        data_list, missing = [], []
        for name in names:
            wnid = name.split('_', 1)[0]
            path = osp.join(self.img_prefix, wnid, name)
            if not osp.isfile(path):
                missing.append(path)
            data_list.append(dict(img_path=path, gt_label=label[wnid]))
        if missing:
            raise FileNotFoundError(
                f'{len(missing)} of the {len(names)} images listed in '
                f'{subset_file} are missing, the first: {missing[0]}')
        return data_list
