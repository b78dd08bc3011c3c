from typing import Dict

import numpy as np
from mmcv.transforms import BaseTransform
from mmpretrain.registry import TRANSFORMS

from .pillow_colour import grayscale


@TRANSFORMS.register_module()
class FastRandomGrayscale(BaseTransform):
    """torchvision's ``RandomGrayscale`` (3 output channels) on a BGR uint8
    array: Pillow's luma, exactly (mmpretrain's ``RandomGrayscale`` weighs
    the channels in float, a level off here and there).

    Args:
        prob (float): Probability of the conversion. Defaults to 0.1.
    """

    def __init__(self, prob: float = 0.1) -> None:
        if not 0 <= prob <= 1:
            raise ValueError(f'prob must be in [0, 1], got {prob}')
        self.prob = prob

    def transform(self, results: Dict) -> Dict:
        if np.random.rand() < self.prob:
            results['img'] = grayscale(results['img'])
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(prob={self.prob})'
