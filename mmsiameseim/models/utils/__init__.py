from .momentum_target import MomentumTarget
from .relative_position import (crop_pair_offsets, relative_patch_centres,
                                relative_sincos_embed)
from .sincos_pos_embed import build_rows_first_sincos_embed
from .token_batchnorm import TokenBatchNorm

__all__ = [
    'MomentumTarget', 'crop_pair_offsets', 'relative_patch_centres',
    'relative_sincos_embed', 'build_rows_first_sincos_embed', 'TokenBatchNorm'
]
