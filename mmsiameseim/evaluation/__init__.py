from .class_subset_accuracy import ClassSubsetAccuracy
from .feature_cache import cache_digest, cached_features, file_identity
from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .frozen_features import (batch_features, build_frozen_backbone_model,
                              extract_features, pool_backbone_output)
from .imagenet_corruption_error import ImageNetCorruptionError
from .knn import weighted_knn_accuracy
from .linear_probe import (linear_probe_accuracy, match_probe_backbone,
                           probe_config, set_probe_epochs)
from .precision import autocast, native_bf16, set_training_precision
from .protocol import FrozenBackboneProtocol

__all__ = [
    'build_frozen_backbone_model', 'extract_features', 'batch_features',
    'pool_backbone_output', 'cache_digest', 'cached_features', 'file_identity',
    'class_balanced_subset', 'logistic_regression_accuracy',
    'weighted_knn_accuracy', 'ClassSubsetAccuracy', 'ImageNetCorruptionError',
    'probe_config', 'match_probe_backbone', 'set_probe_epochs',
    'linear_probe_accuracy', 'autocast', 'native_bf16',
    'set_training_precision', 'FrozenBackboneProtocol'
]
