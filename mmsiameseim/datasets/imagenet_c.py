import os.path as osp
from typing import Dict, List, Sequence

from mmpretrain.registry import DATASETS

from .imagenet_wnid_folder import ImageNetWnidFolder, list_wnid_folder

# The 15 corruptions of the ImageNet-C benchmark (Hendrycks & Dietterich,
# ICLR 2019); the 4 "extra" ones are not part of mCE.
IMAGENET_C_CORRUPTIONS = ('gaussian_noise', 'shot_noise', 'impulse_noise',
                          'defocus_blur', 'glass_blur', 'motion_blur',
                          'zoom_blur', 'snow', 'frost', 'fog', 'brightness',
                          'contrast', 'elastic_transform', 'pixelate',
                          'jpeg_compression')


@DATASETS.register_module()
class ImageNetC(ImageNetWnidFolder):
    """ImageNet-C stored as ``<data_root>/<corruption>/<severity>/<wnid>/``.

    Each sample records its ``corruption`` and ``severity`` (keep them in
    ``PackInputs(meta_keys=...)``) so that
    :class:`ImageNetCorruptionError` can group the errors.

    Args:
        data_root (str): The ImageNet-C root.
        class_map_ann_file (str): ImageNet-1k training list
            (``meta/train.txt``) giving the wnid -> label map.
        corruptions (Sequence[str]): Corruption folders to read; each must
            exist with all ``severities``. Defaults to the 15 benchmark
            corruptions.
        severities (Sequence[int]): Defaults to (1, 2, 3, 4, 5).
        **kwargs: Other arguments of :class:`ImageNetWnidFolder`.
    """

    def __init__(self,
                 data_root: str,
                 class_map_ann_file: str,
                 corruptions: Sequence[str] = IMAGENET_C_CORRUPTIONS,
                 severities: Sequence[int] = (1, 2, 3, 4, 5),
                 **kwargs) -> None:
        self.corruptions = tuple(corruptions)
        self.severities = tuple(int(s) for s in severities)
        super().__init__(data_root, class_map_ann_file, **kwargs)

    def list_samples(self, wnid_to_label: Dict[str, int]) -> List[dict]:
        samples = []
        for corruption in self.corruptions:
            for severity in self.severities:
                folder = osp.join(self.data_root, corruption, str(severity))
                if not osp.isdir(folder):
                    raise FileNotFoundError(
                        f'ImageNet-C folder {folder!r} is missing '
                        f'(corruption {corruption!r}, severity {severity})')
                for s in list_wnid_folder(folder, wnid_to_label,
                                          self.extensions):
                    s.update(corruption=corruption, severity=severity)
                    samples.append(s)
        return samples
