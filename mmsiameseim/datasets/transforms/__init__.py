from .blockwise_mask import BlockwiseMaskGenerator
from .per_view_transforms import PerViewTransforms
from .two_view_crop import TwoViewRandomResizedCrop

__all__ = [
    'BlockwiseMaskGenerator', 'PerViewTransforms', 'TwoViewRandomResizedCrop'
]
