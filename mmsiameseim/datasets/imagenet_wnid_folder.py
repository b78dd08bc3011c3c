import os
import os.path as osp
from typing import Dict, List, Optional, Sequence

from mmengine.dataset import BaseDataset
from mmengine.logging import MMLogger
from mmpretrain.registry import DATASETS

IMG_EXTENSIONS = ('.jpg', '.jpeg', '.png')


def load_wnid_to_label(class_map_ann_file: str) -> Dict[str, int]:
    """Read the ImageNet-1k ``wnid -> label`` map from a training list.

    The list is mmpretrain's ``meta/train.txt`` (``<wnid>/<file> <label>``
    per line), i.e. the very file the classifier was trained with, so the
    labels of the test sets agree with the classifier's outputs by
    construction.

    Args:
        class_map_ann_file (str): Path of the training annotation list.

    Returns:
        dict: wnid -> ImageNet-1k class index.
    """
    if not osp.isfile(class_map_ann_file):
        raise FileNotFoundError(
            f'class_map_ann_file {class_map_ann_file!r} not found; it must be '
            'the ImageNet-1k training list (meta/train.txt) the classifier '
            'was trained with')
    wnid_to_label: Dict[str, int] = {}
    with open(class_map_ann_file) as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 2 or '/' not in parts[0]:
                raise ValueError(
                    f'{class_map_ann_file}:{line_no}: expected '
                    f'"<wnid>/<file> <label>", got {line.strip()!r}')
            wnid, label = parts[0].split('/', 1)[0], int(parts[1])
            if wnid_to_label.setdefault(wnid, label) != label:
                raise ValueError(
                    f'{class_map_ann_file}:{line_no}: wnid {wnid} has labels '
                    f'{wnid_to_label[wnid]} and {label}')
    if not wnid_to_label:
        raise ValueError(f'{class_map_ann_file} lists no samples')
    return wnid_to_label


def list_wnid_folder(folder: str,
                     wnid_to_label: Dict[str, int],
                     extensions: Sequence[str] = IMG_EXTENSIONS) -> List[dict]:
    """Samples of a ``<folder>/<wnid>/<image>`` tree, labelled in ImageNet-1k.

    Files directly in ``folder`` (e.g. ImageNet-A's README.txt) are ignored;
    a sub-folder that is not an ImageNet-1k wnid is an error.
    """
    if not osp.isdir(folder):
        raise FileNotFoundError(f'image folder {folder!r} not found')
    wnids = sorted(
        d for d in os.listdir(folder) if osp.isdir(osp.join(folder, d)))
    unknown = [w for w in wnids if w not in wnid_to_label]
    if unknown:
        raise ValueError(
            f'{folder}: {len(unknown)} class folder(s) are not ImageNet-1k '
            f'classes of the class map, e.g. {unknown[:5]}')
    samples = []
    for wnid in wnids:
        files = sorted(
            f for f in os.listdir(osp.join(folder, wnid))
            if f.lower().endswith(tuple(extensions)))
        if not files:
            raise ValueError(f'{osp.join(folder, wnid)} holds no image '
                             f'({", ".join(extensions)})')
        samples += [
            dict(
                img_path=osp.join(folder, wnid, f),
                gt_label=wnid_to_label[wnid]) for f in files
        ]
    if not samples:
        raise ValueError(f'{folder} holds no class folder')
    return samples


@DATASETS.register_module()
class ImageNetWnidFolder(BaseDataset):
    """An ImageNet test set stored as ``<data_root>/<wnid>/<image>``.

    ImageNet-A, ImageNet-R (200 classes each) and ImageNet-Sketch (1000)
    come in this layout. Labels are ImageNet-1k class indices, so a
    1000-way classifier is evaluated without remapping. The indices of the
    classes present are stored in ``metainfo['class_subset']``;
    :class:`ClassSubsetAccuracy` restricts the logits to them, which is the
    standard protocol for the 200-class sets.

    Args:
        data_root (str): Folder holding one sub-folder per wnid.
        class_map_ann_file (str): ImageNet-1k training list
            (``meta/train.txt``) giving the wnid -> label map.
        extensions (Sequence[str]): Image file extensions.
            Defaults to ('.jpg', '.jpeg', '.png').
        **kwargs: Other arguments of :class:`mmengine.dataset.BaseDataset`.
    """

    def __init__(self,
                 data_root: str,
                 class_map_ann_file: str,
                 extensions: Sequence[str] = IMG_EXTENSIONS,
                 metainfo: Optional[dict] = None,
                 **kwargs) -> None:
        self.class_map_ann_file = class_map_ann_file
        self.extensions = tuple(e.lower() for e in extensions)
        super().__init__(
            data_root=data_root, metainfo=metainfo, lazy_init=True, **kwargs)
        self.full_init()

    def list_samples(self, wnid_to_label: Dict[str, int]) -> List[dict]:
        """The samples under ``data_root``."""
        return list_wnid_folder(self.data_root, wnid_to_label, self.extensions)

    def load_data_list(self) -> List[dict]:
        wnid_to_label = load_wnid_to_label(self.class_map_ann_file)
        data_list = self.list_samples(wnid_to_label)
        subset = sorted({d['gt_label'] for d in data_list})
        self._metainfo['class_subset'] = subset
        self._metainfo['num_imagenet_classes'] = len(wnid_to_label)
        MMLogger.get_current_instance().info(
            f'{type(self).__name__}: {len(data_list)} images of '
            f'{len(subset)} of the {len(wnid_to_label)} ImageNet-1k classes '
            f'in {self.data_root}')
        return data_list
