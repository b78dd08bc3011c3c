"""The authors' blockwise patch mask: :class:`BlockwiseMaskGenerator`
(uniformly random patches, Table 3's random-mask row, are
:class:`~.random_patch_mask.RandomPatchMaskGenerator`)."""
import math
from typing import Optional, Sequence, Union

import numpy as np
from mmpretrain.datasets.transforms import BEiTMaskGenerator
from mmpretrain.registry import TRANSFORMS


def check_grid_units(generator, results: dict) -> None:
    """Refuse a mask grid as fine as the image's pixels or finer: its
    ``input_size`` was given in pixels (as mmpretrain's
    ``SimMIMMaskGenerator`` takes it), not in patches.

    Args:
        generator: The mask generator (``height``, ``width``).
        results (dict): The sample; its ``img_shape`` (H, W) in pixels.
    """
    shape = results.get('img_shape')
    if shape is None or len(shape) < 2:
        return
    height, width = int(shape[0]), int(shape[1])
    if generator.height < height and generator.width < width:
        return
    raise ValueError(
        f'{type(generator).__name__}: input_size='
        f'{(generator.height, generator.width)} counts patches, not pixels, '
        f'and the image is {height}x{width} pixels: set input_size to the '
        "model's patch grid, its img_size // patch_size (e.g. "
        f'{height // 16} for 16-pixel patches, {height // 4} for 4-pixel '
        'ones), and num_masking_patches to a share of those patches')


def check_mask_count(generator: str, num_masking_patches: int, height: int,
                     width: int) -> None:
    """Refuse a mask count off ``0 .. height * width - 1``: masking every
    patch leaves the encoder only its cls token (its features then never
    learn, and the token BatchNorm's variance collapses).

    Args:
        generator (str): The generator's name, for the message.
        num_masking_patches (int): Patches to mask.
        height (int): Patch grid rows.
        width (int): Patch grid columns.
    """
    patches = height * width
    if isinstance(num_masking_patches,
                  bool) or not isinstance(num_masking_patches, int):
        raise TypeError(f'{generator}: num_masking_patches must be an int, '
                        f'got {num_masking_patches!r}')
    if not 0 <= num_masking_patches < patches:
        what = ('masks every patch, so the encoder would see none'
                if num_masking_patches == patches else 'does not fit the grid')
        raise ValueError(
            f'{generator}: num_masking_patches={num_masking_patches} {what} '
            f'of a {height}x{width} grid ({patches} patches); valid: 0 to '
            f'{patches - 1}')


@TRANSFORMS.register_module()
class BlockwiseMaskGenerator(BEiTMaskGenerator):
    """BEiT-style blockwise patch mask, optionally with an exact count.

    Blocks of ``min_num_patches``..``max_num_patches`` patches with aspect
    ratios in [``min_aspect``, ``max_aspect``] are placed at random until the
    requested count is reached or no block fits; with ``fixed_count`` the
    remaining patches are then masked at random, so that exactly
    ``num_masking_patches`` are masked (as the SiameseIM authors do).

    **Added keys**: ``mask`` bool (h, w), True = masked.

    The grid is counted in patches, not pixels: ``input_size`` is the
    model's patch grid, its ``img_size // patch_size`` (14 for a 224-pixel
    ViT-B/16, 48 for SimMIM's 192-pixel Swin with patch 4; mmpretrain's
    ``SimMIMMaskGenerator`` counts its ``input_size`` in pixels instead). A
    grid as fine as the image's pixels is refused at the first sample
    (:func:`check_grid_units`), and ``FaultTolerantRunner`` refuses a grid
    that is not the backbone's ``patch_resolution`` before any data is
    loaded, with the value to set
    (:func:`~mmsiameseim.models.utils.pipeline_check.check_mask_grid`).

    Args:
        input_size (int | tuple): Patch grid (h, w), in patches.
        num_masking_patches (int): Patches to mask (118 of 196 for ViT-B/16),
            0 to all patches but one.
        min_num_patches (int): Smallest block. Defaults to 16.
        max_num_patches (int, optional): Largest block. Defaults to
            ``num_masking_patches``.
        min_aspect (float): Smallest block aspect. Defaults to 0.3.
        max_aspect (float, optional): Largest aspect. Defaults to
            ``1 / min_aspect``.
        fixed_count (bool): Top up at random to exactly
            ``num_masking_patches``. Defaults to True.
    """

    def __init__(self,
                 input_size: Union[int, Sequence[int]],
                 num_masking_patches: int,
                 min_num_patches: int = 16,
                 max_num_patches: Optional[int] = None,
                 min_aspect: float = 0.3,
                 max_aspect: Optional[float] = None,
                 fixed_count: bool = True) -> None:
        super().__init__(
            input_size=tuple(input_size)
            if not isinstance(input_size, int) else input_size,
            num_masking_patches=num_masking_patches,
            min_num_patches=min_num_patches,
            max_num_patches=max_num_patches,
            min_aspect=min_aspect,
            max_aspect=max_aspect)
        check_mask_count(
            type(self).__name__, num_masking_patches, self.height, self.width)
        self.fixed_count = fixed_count

    def _mask(self, mask: np.ndarray, max_mask_patches: int) -> int:
        """Place one block; returns how many new patches it masked."""
        delta = 0
        for _ in range(10):
            target_area = np.random.uniform(self.min_num_patches,
                                            max_mask_patches)
            aspect = math.exp(np.random.uniform(*self.log_aspect_ratio))
            h = int(round(math.sqrt(target_area * aspect)))
            w = int(round(math.sqrt(target_area / aspect)))
            if w < self.width and h < self.height:
                top = np.random.randint(0, self.height - h + 1)
                left = np.random.randint(0, self.width - w + 1)
                block = mask[top:top + h, left:left + w]
                new = h * w - int(block.sum())
                if 0 < new <= max_mask_patches:
                    block[...] = 1
                    delta += new
            if delta > 0:
                break
        return delta

    def transform(self, results: dict) -> dict:
        check_grid_units(self, results)
        mask = np.zeros((self.height, self.width), dtype=np.uint8)
        count = 0
        while count < self.num_masking_patches:
            budget = min(self.num_masking_patches - count,
                         self.max_num_patches)
            delta = self._mask(mask, budget)
            if delta == 0:
                break
            count += delta
        if self.fixed_count and count < self.num_masking_patches:
            free = np.flatnonzero(mask == 0)
            chosen = np.random.permutation(free)[:self.num_masking_patches -
                                                 count]
            mask.flat[chosen] = 1
        results['mask'] = mask.astype(bool)
        return results
