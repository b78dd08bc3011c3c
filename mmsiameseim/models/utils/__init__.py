from .eager_data_preprocessor import EagerSelfSupDataPreprocessor
from .geometry import (BatchGeometry, CropPairOffsets, PatchGrid,
                       batch_geometry, build_rows_first_sincos_embed,
                       check_batch_grid, crop_pair_offsets, crop_source_shapes,
                       relative_patch_centres, relative_sincos_embed)
from .pipeline_check import check_patch_grid

__all__ = [
    'BatchGeometry', 'PatchGrid', 'batch_geometry', 'check_batch_grid',
    'check_patch_grid', 'crop_source_shapes', 'CropPairOffsets',
    'crop_pair_offsets', 'relative_patch_centres', 'relative_sincos_embed',
    'build_rows_first_sincos_embed', 'EagerSelfSupDataPreprocessor'
]
