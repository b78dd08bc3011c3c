from .class_subset_accuracy import ClassSubsetAccuracy
from .feature_cache import cache_digest, cached_features
from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .frozen_features import build_frozen_backbone_model, extract_features
from .imagenet_corruption_error import ImageNetCorruptionError
from .knn import weighted_knn_accuracy

__all__ = [
    'build_frozen_backbone_model', 'extract_features', 'cache_digest',
    'cached_features', 'class_balanced_subset',
    'logistic_regression_accuracy', 'weighted_knn_accuracy',
    'ClassSubsetAccuracy', 'ImageNetCorruptionError'
]
