"""The evaluation a user runs on a checkpoint or a folder: weighted kNN,
the linear probe, few-shot logistic regression, frozen features and
embeddings, their cache, and the robustness metrics."""
from ..precision import autocast, native_bf16, set_training_precision
from .cached_linear_probe import (cached_linear_probe_accuracy,
                                  check_cached_probe_config,
                                  extract_probe_views, probe_view_pipelines,
                                  train_probe_on_features)
from .checkpoint_backbone import (checkpoint_config, checkpoint_or_config,
                                  frozen_vit)
from .class_subset_accuracy import ClassSubsetAccuracy
from .feature_cache import cache_digest, cached_features, file_identity
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

__all__ = [
    'build_frozen_backbone_model', 'extract_features', 'batch_features',
    'pool_backbone_output', 'cache_digest', 'cached_features', 'file_identity',
    'class_balanced_subset', 'logistic_regression_accuracy',
    'weighted_knn_accuracy', 'ClassSubsetAccuracy', 'ImageNetCorruptionError',
    'probe_config', 'match_probe_backbone', 'set_probe_epochs',
    'linear_probe_accuracy', 'autocast', 'native_bf16',
    'set_training_precision', 'VIT_FEATURES', 'set_vit_feature',
    'checkpoint_config', 'checkpoint_or_config', 'frozen_vit', 'pool_tokens',
    'EMBEDDING_FEATURES', 'embed_folder', 'embed_images', 'load_centre_crop',
    'embed_split', 'evaluate_labelled_folder', 'cached_linear_probe_accuracy',
    'check_cached_probe_config', 'extract_probe_views', 'probe_view_pipelines',
    'train_probe_on_features'
]
