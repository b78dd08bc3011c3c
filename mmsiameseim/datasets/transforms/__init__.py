from .mask_generators import BlockwiseMaskGenerator
from .pillow_colour import (FastColorJitter, FastGaussianBlur,
                            FastRandomGrayscale)
from .random_patch_mask import RandomPatchMaskGenerator
from .select_view import SelectView
from .strict_loading import (DamagedImageError, ImageModeError,
                             StrictLoadImageFromFile, array_to_uint8, to_rgb)
from .two_view_crop import PerViewTransforms, TwoViewRandomResizedCrop

__all__ = [
    'BlockwiseMaskGenerator', 'DamagedImageError', 'FastColorJitter',
    'FastGaussianBlur', 'FastRandomGrayscale', 'ImageModeError',
    'PerViewTransforms', 'RandomPatchMaskGenerator', 'SelectView',
    'StrictLoadImageFromFile', 'TwoViewRandomResizedCrop', 'array_to_uint8',
    'to_rgb'
]
