import os
import os.path as osp
from typing import List, Optional, Sequence

from mmengine.logging import MMLogger
from mmpretrain.datasets import BaseDataset
from mmpretrain.registry import DATASETS

from .image_folder_files import (FOLDER_IMAGE_EXTENSIONS, drop_duplicate_files,
                                 list_image_files, warn_duplicates)


def class_folders(folder: str) -> List[str]:
    """The sub-folders of ``folder`` that name classes: sorted, hidden ones
    ('.git', '.ipynb_checkpoints') left out."""
    return sorted(
        d for d in os.listdir(folder)
        if not d.startswith('.') and osp.isdir(osp.join(folder, d)))


def _case_only(unknown: List[str], classes: List[str]) -> str:
    """What the user meant by each folder that differs from a class only in
    case ('Cat' for 'cat'): folder names are compared exactly."""
    lower = {c.lower(): c for c in classes}
    pairs = [(c, lower[c.lower()]) for c in unknown if c.lower() in lower]
    return ''.join(
        f'; {c!r} differs from the class {d!r} only in case (class folders '
        'are matched exactly: rename one)' for c, d in pairs)


@DATASETS.register_module()
class LabelledImageFolder(BaseDataset):
    """Your own labelled images: one sub-folder per class in each split,
    ``DATA_ROOT/SPLIT/CLASS/**/IMAGE``.

    The classes are the sub-folders of ``DATA_ROOT/CLASS_SPLIT`` (the
    training split), sorted, for every split: a validation split that lacks
    a class keeps the training split's label numbers (mmpretrain's
    ``CustomDataset`` numbers each split's own folders, so one missing class
    would shift every label after it), and a class folder that the training
    split does not have is refused by name. Images are found recursively
    inside each class folder, by extension in any case; hidden files and
    folders are left out. Each image is read once: a symbolic link to an
    image already listed in the split (in sorted order, in this class or
    an earlier one) is left out with a warning naming it. Images beside
    the class folders, and class folders without an image, are named in a
    warning. Read them with ``StrictLoadImageFromFile`` (every image mode
    and bit depth).

    Args:
        data_root (str): The folder holding the splits. Required: the
            configs ship without it (``--cfg-options
            train_dataloader.dataset.data_root=DIR
            val_dataloader.dataset.data_root=DIR``).
        split (str): The split's sub-folder ('train', 'val', ...; '' for
            ``data_root`` itself). Defaults to 'train'.
        class_split (str): The split whose class folders number the
            classes. Defaults to 'train'.
        pipeline (Sequence): Data transforms.
        extensions (Sequence[str]): Image extensions. Defaults to
            :data:`FOLDER_IMAGE_EXTENSIONS`.
        **kwargs: Other :class:`mmpretrain.datasets.BaseDataset` arguments
            (``indices``, ``test_mode``, ...).

    Raises:
        ValueError: ``data_root`` is not set, or the split has a class
            folder that the class split has not.
        FileNotFoundError: A folder is missing, the class split has no class
            folder, or the split holds no image.
    """

    def __init__(self,
                 data_root: Optional[str] = None,
                 split: str = 'train',
                 class_split: str = 'train',
                 pipeline: Sequence = (),
                 extensions: Sequence[str] = FOLDER_IMAGE_EXTENSIONS,
                 **kwargs) -> None:
        name = type(self).__name__
        if not data_root:
            raise ValueError(
                f'{name}: data_root is not set; give the folder that holds '
                f'the {split or "class"} folder, e.g. --cfg-options '
                'train_dataloader.dataset.data_root=DIR '
                'val_dataloader.dataset.data_root=DIR')
        self.split = split
        self.class_split = class_split
        self.extensions = tuple(extensions)
        super().__init__(
            ann_file='', data_root=data_root, pipeline=pipeline, **kwargs)

    def load_data_list(self) -> List[dict]:
        name = type(self).__name__
        logger = MMLogger.get_current_instance()
        class_dir = osp.join(self.data_root, self.class_split)
        split_dir = osp.join(self.data_root, self.split)
        for folder, what in ((class_dir, 'class_split'), (split_dir, 'split')):
            if not osp.isdir(folder):
                raise FileNotFoundError(
                    f'{name}: no folder {folder} (data_root='
                    f'{self.data_root!r}, {what}='
                    f'{getattr(self, what)!r})')
        classes = class_folders(class_dir)
        if not classes:
            raise FileNotFoundError(
                f'{name}: {class_dir} has no class sub-folders; put the '
                'images of each class in a folder named after the class')
        present = class_folders(split_dir)
        unknown = [c for c in present if c not in classes]
        absent = [c for c in classes if c not in present]
        if unknown:
            raise ValueError(
                f'{name}: {split_dir} has class folders that {class_dir} '
                f'has not: {unknown}{_case_only(unknown, classes)}; every '
                f'split takes the classes of class_split='
                f'{self.class_split!r}' +
                (f' (classes of {class_dir} with no folder in {split_dir}: '
                 f'{absent})' if absent else ''))
        if absent:
            logger.warning(f'{name}: classes of {class_dir} with no folder '
                           f'in {split_dir}: {absent}')
        data_list, empty = [], []
        for label, cls in enumerate(classes):
            if cls not in present:
                continue
            listing = list_image_files(
                osp.join(split_dir, cls), self.extensions, what=name)
            if not listing.files:
                empty.append(cls)
            data_list += [
                dict(img_path=osp.join(split_dir, cls, rel), gt_label=label)
                for rel in listing.files
            ]
        data_list = self.drop_duplicates(data_list, split_dir)
        loose = [
            f for f in os.listdir(split_dir)
            if osp.isfile(osp.join(split_dir, f))
            and f.lower().endswith(self.extensions)
        ]
        if loose:
            logger.warning(
                f'{name}: {len(loose)} images in {split_dir} are in no class '
                f'folder and are left out (e.g. {sorted(loose)[0]})')
        if empty:
            logger.warning(f'{name}: class folders without an image in '
                           f'{split_dir}: {empty}')
        if not data_list:
            raise FileNotFoundError(
                f'{name}: no image in the class folders of {split_dir} '
                f'(extensions {", ".join(self.extensions)})')
        self._metainfo['classes'] = tuple(classes)
        logger.info(f'{name}: {len(data_list)} images of '
                    f'{len(present) - len(empty)}/{len(classes)} classes in '
                    f'{split_dir}')
        return data_list

    def drop_duplicates(self, data_list: List[dict],
                        split_dir: str) -> List[dict]:
        """``data_list`` less the images reached a second time through a
        symbolic link from another class folder (each class folder's own
        duplicates are left out when it is listed); warns naming one."""
        paths = [osp.relpath(d['img_path'], split_dir) for d in data_list]
        kept, duplicates = drop_duplicate_files(paths, split_dir)
        if not duplicates:
            return data_list
        warn_duplicates(duplicates, split_dir, type(self).__name__)
        dropped, first = duplicates[0]
        MMLogger.get_current_instance().warning(
            f'{type(self).__name__}: {dropped} (a symbolic link) labels the '
            f'image {first} with a second class; it keeps the class of '
            f'{first}')
        kept = set(kept)
        return [d for d, p in zip(data_list, paths) if p in kept]
