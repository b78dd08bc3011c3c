from .activation_checkpointing import run_blocks, set_activation_checkpointing
from .batch_geometry import (BatchGeometry, CropPairOffsets, PatchGrid,
                             batch_geometry, check_batch_grid,
                             check_patch_grid, crop_pair_offsets,
                             crop_source_shapes)
from .cpu_autocast_attention import (fp32_attention_under_cpu_autocast,
                                     use_fp32_attention_under_cpu_autocast)
from .eager_data_preprocessor import EagerSelfSupDataPreprocessor
from .encoder_interface import (check_masked_encoder, check_micro_batches,
                                check_siameseim_parts)
from .momentum_target import MomentumTarget
from .relative_position import relative_patch_centres, relative_sincos_embed
from .sincos_pos_embed import build_rows_first_sincos_embed
from .token_batchnorm import TokenBatchNorm
from .zero_drop_path import drop_zero_drop_paths

__all__ = [
    'fp32_attention_under_cpu_autocast',
    'use_fp32_attention_under_cpu_autocast', 'BatchGeometry', 'PatchGrid',
    'batch_geometry', 'check_batch_grid', 'check_patch_grid',
    'crop_source_shapes', 'check_masked_encoder', 'check_siameseim_parts',
    'MomentumTarget', 'CropPairOffsets', 'crop_pair_offsets',
    'relative_patch_centres', 'relative_sincos_embed',
    'build_rows_first_sincos_embed', 'TokenBatchNorm',
    'EagerSelfSupDataPreprocessor', 'drop_zero_drop_paths', 'run_blocks',
    'set_activation_checkpointing', 'check_micro_batches'
]
