from .imagenet_c import IMAGENET_C_CORRUPTIONS, ImageNetC
from .imagenet_subset import ImageNetSubset
from .imagenet_wnid_folder import ImageNetWnidFolder, load_wnid_to_label
from .transforms import *  # noqa: F401,F403

__all__ = [
    'IMAGENET_C_CORRUPTIONS', 'ImageNetC', 'ImageNetSubset',
    'ImageNetWnidFolder', 'load_wnid_to_label'
]
