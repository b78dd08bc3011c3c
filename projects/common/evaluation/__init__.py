"""The studies' evaluation, built on the package's (``mmsiameseim.evaluation``:

kNN, linear probe, few-shot, frozen features): the frozen-backbone protocol
every study scores its runs with, the dense probes on Fashion-MNIST mosaics
(grid-aligned quadrants; items scattered at native size, scored per pixel), the
stored per-checkpoint results that let a study continue, and the PCA pictures
of patch features.
"""
from projects.common.evaluation.dense_probe import (dense_probe_scores,
                                                    fit_linear_classifier,
                                                    patch_tokens,
                                                    raw_patch_pixels,
                                                    segmentation_scores)
from projects.common.evaluation.dense_probes import (DENSE_PROBES,
                                                     build_dense_probe)
from projects.common.evaluation.feature_pca import nearest_neighbours, pca_rgb
from projects.common.evaluation.mosaic_probe import MosaicDenseProbe
from projects.common.evaluation.mosaics import make_mosaics, patch_labels
from projects.common.evaluation.pixel_floors import (PixelFloors,
                                                     pixel_floors_from_cfg,
                                                     vector_probe_config)
from projects.common.evaluation.pixel_scores import (boundary_iou,
                                                     inner_boundary,
                                                     pixel_scores)
from projects.common.evaluation.protocol import (FrozenBackboneProtocol,
                                                 raw_images)
from projects.common.evaluation.scattered_mosaic_probe import \
    ScatteredMosaicProbe
from projects.common.evaluation.scattered_mosaics import make_scattered_mosaics

__all__ = [
    'FrozenBackboneProtocol', 'raw_images', 'MosaicDenseProbe', 'make_mosaics',
    'patch_labels', 'patch_tokens', 'fit_linear_classifier',
    'segmentation_scores', 'dense_probe_scores', 'raw_patch_pixels',
    'nearest_neighbours', 'pca_rgb', 'PixelFloors', 'pixel_floors_from_cfg',
    'vector_probe_config', 'ScatteredMosaicProbe', 'make_scattered_mosaics',
    'boundary_iou', 'inner_boundary', 'pixel_scores', 'DENSE_PROBES',
    'build_dense_probe'
]
