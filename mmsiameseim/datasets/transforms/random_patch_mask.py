"""Uniformly random patch masks: :class:`RandomPatchMaskGenerator`."""
from typing import Sequence, Union

import numpy as np
from mmcv.transforms import BaseTransform
from mmpretrain.registry import TRANSFORMS

from .mask_generators import check_grid_units, check_mask_count


@TRANSFORMS.register_module()
class RandomPatchMaskGenerator(BaseTransform):
    """Uniformly random patch mask with an exact count (MAE-style masking,
    the "random" mask type of the SiameseIM ablations).

    **Added keys**: ``mask`` bool (h, w), True = masked.

    The grid is counted in patches, not pixels: ``input_size`` is the
    model's ``img_size // patch_size``; checked as
    :class:`~.mask_generators.BlockwiseMaskGenerator`'s is.

    Args:
        input_size (int | tuple): Patch grid (h, w), in patches.
        num_masking_patches (int): Patches to mask, 0 to all patches but
            one.
    """

    def __init__(self, input_size: Union[int, Sequence[int]],
                 num_masking_patches: int) -> None:
        self.height, self.width = (input_size, input_size) if isinstance(
            input_size, int) else tuple(input_size)
        check_mask_count(
            type(self).__name__, num_masking_patches, self.height, self.width)
        self.num_masking_patches = num_masking_patches

    def transform(self, results: dict) -> dict:
        check_grid_units(self, results)
        mask = np.zeros(self.height * self.width, dtype=bool)
        mask[np.random.permutation(
            mask.size)[:self.num_masking_patches]] = True
        results['mask'] = mask.reshape(self.height, self.width)
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(input_size='
                f'{(self.height, self.width)}, '
                f'num_masking_patches={self.num_masking_patches})')
