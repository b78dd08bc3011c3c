from .blockwise_mask import BlockwiseMaskGenerator
from .fast_color_jitter import FastColorJitter
from .fast_gaussian_blur import FastGaussianBlur
from .fast_grayscale import FastRandomGrayscale
from .image_modes import ImageModeError, array_to_uint8, to_rgb
from .per_view_transforms import PerViewTransforms
from .pil_color_jitter import PILColorJitter
from .random_patch_mask import RandomPatchMaskGenerator
from .select_view import SelectView
from .strict_loading import DamagedImageError, StrictLoadImageFromFile
from .two_view_crop import TwoViewRandomResizedCrop

__all__ = [
    'BlockwiseMaskGenerator', 'DamagedImageError', 'FastColorJitter',
    'FastGaussianBlur', 'FastRandomGrayscale', 'ImageModeError',
    'PerViewTransforms', 'PILColorJitter', 'RandomPatchMaskGenerator',
    'SelectView', 'StrictLoadImageFromFile', 'TwoViewRandomResizedCrop',
    'array_to_uint8', 'to_rgb'
]
