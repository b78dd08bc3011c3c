from .data_root import set_data_root
from .image_folder import UnlabeledImageFolder
from .image_folder_damage import DamagedImagePolicy, TooManyDamagedImagesError
from .image_folder_files import (FOLDER_IMAGE_EXTENSIONS, check_image_file,
                                 list_image_files)
from .imagenet_c import IMAGENET_C_CORRUPTIONS, ImageNetC
from .imagenet_subset import ImageNetSubset
from .imagenet_wnid_folder import ImageNetWnidFolder, load_wnid_to_label
from .labelled_image_folder import LabelledImageFolder
from .local_fashion_mnist import LocalFashionMNIST
from .transforms import *  # noqa: F401,F403

__all__ = [
    'DamagedImagePolicy', 'FOLDER_IMAGE_EXTENSIONS',
    'TooManyDamagedImagesError', 'UnlabeledImageFolder', 'check_image_file',
    'list_image_files', 'IMAGENET_C_CORRUPTIONS', 'ImageNetC',
    'ImageNetSubset', 'ImageNetWnidFolder', 'LabelledImageFolder',
    'LocalFashionMNIST', 'load_wnid_to_label', 'set_data_root'
]
