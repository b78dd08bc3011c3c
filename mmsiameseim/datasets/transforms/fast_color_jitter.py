from typing import Dict

import numpy as np
from mmpretrain.datasets.transforms import ColorJitter
from mmpretrain.registry import TRANSFORMS

from . import pillow_colour as pc

_ADJUST = (pc.brightness, pc.contrast, pc.saturation, pc.hue)


@TRANSFORMS.register_module()
class FastColorJitter(ColorJitter):
    """Torchvision's PIL ``ColorJitter`` on a BGR uint8 array, without Pillow.

    The same arguments and random draws as mmpretrain's ``ColorJitter``
    (a random order of brightness, contrast, saturation and hue, each
    factor uniform in its range); each adjustment is Pillow's formula
    computed on the array (:mod:`.pillow_colour`: brightness, contrast and
    saturation exact; hue within 8 / 255 on at most 0.5 % of the pixels),
    about 3x faster than a PIL round trip per adjustment.

    Args:
        brightness, contrast, saturation, hue: as ``ColorJitter``'s (a
            number or a (min, max) range; 0 leaves that adjustment out).
    """

    def __init__(self, brightness=0., contrast=0., saturation=0., hue=0.):
        super().__init__(
            brightness=brightness,
            contrast=contrast,
            saturation=saturation,
            hue=hue,
            backend='pillow')

    def transform(self, results: Dict) -> Dict:
        img = results['img']
        if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or \
                img.ndim != 3 or img.shape[2] != 3:
            raise TypeError('FastColorJitter needs an H x W x 3 uint8 BGR '
                            f'image, got {_describe(img)}')
        order, *factors = self._rand_params()
        results['img'] = self.apply(img, order, *factors)
        return results

    @staticmethod
    def apply(img: np.ndarray, order, brightness, contrast, saturation,
              hue) -> np.ndarray:
        """The adjustments in ``order`` (0 brightness, 1 contrast, 2
        saturation, 3 hue); a factor of None skips its adjustment."""
        factors = (brightness, contrast, saturation, hue)
        for index in order:
            if factors[index] is not None:
                img = _ADJUST[index](img, factors[index])
        return img


def _describe(img) -> str:
    if isinstance(img, np.ndarray):
        return f'an array of shape {img.shape}, dtype {img.dtype}'
    return type(img).__name__
