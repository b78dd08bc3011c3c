from .imagenet_c import IMAGENET_C_CORRUPTIONS, ImageNetC
from .imagenet_subset import ImageNetSubset
from .imagenet_wnid_folder import ImageNetWnidFolder, load_wnid_to_label
from .local_fashion_mnist import LocalFashionMNIST
from .transforms import *  # noqa: F401,F403

__all__ = [
    'IMAGENET_C_CORRUPTIONS', 'ImageNetC', 'ImageNetSubset',
    'ImageNetWnidFolder', 'LocalFashionMNIST', 'load_wnid_to_label'
]
