from ..precision import autocast, native_bf16, set_training_precision
from .checkpoint_backbone import (checkpoint_config, checkpoint_or_config,
                                  frozen_vit)
from .class_subset_accuracy import ClassSubsetAccuracy
from .dense_probe import (dense_probe_scores, fit_linear_classifier,
                          patch_tokens, raw_patch_pixels, segmentation_scores)
from .feature_cache import cache_digest, cached_features, file_identity
from .feature_pca import nearest_neighbours, pca_rgb
from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .folder_embeddings import (EMBEDDING_FEATURES, embed_folder, embed_images,
                                load_centre_crop)
from .frozen_features import (batch_features, build_frozen_backbone_model,
                              extract_features, pool_backbone_output,
                              pool_tokens)
from .imagenet_corruption_error import ImageNetCorruptionError
from .knn import weighted_knn_accuracy
from .labelled_folder import embed_split, evaluate_labelled_folder
from .linear_probe import (VIT_FEATURES, linear_probe_accuracy,
                           match_probe_backbone, probe_config,
                           set_probe_epochs, set_vit_feature)
from .mosaic_probe import MosaicDenseProbe
from .mosaics import make_mosaics, patch_labels
from .protocol import FrozenBackboneProtocol, raw_images

__all__ = [
    'build_frozen_backbone_model', 'extract_features', 'batch_features',
    'pool_backbone_output', 'cache_digest', 'cached_features', 'file_identity',
    'class_balanced_subset', 'logistic_regression_accuracy',
    'weighted_knn_accuracy', 'ClassSubsetAccuracy', 'ImageNetCorruptionError',
    'probe_config', 'match_probe_backbone', 'set_probe_epochs',
    'linear_probe_accuracy', 'autocast', 'native_bf16',
    'set_training_precision', 'FrozenBackboneProtocol', 'raw_images',
    'VIT_FEATURES', 'set_vit_feature', 'MosaicDenseProbe', 'make_mosaics',
    'patch_labels', 'patch_tokens', 'fit_linear_classifier',
    'segmentation_scores', 'dense_probe_scores', 'raw_patch_pixels',
    'checkpoint_config', 'checkpoint_or_config', 'frozen_vit',
    'nearest_neighbours', 'pca_rgb', 'pool_tokens', 'EMBEDDING_FEATURES',
    'embed_folder', 'embed_images', 'load_centre_crop', 'embed_split',
    'evaluate_labelled_folder'
]
