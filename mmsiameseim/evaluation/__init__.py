from .feature_cache import cache_digest, cached_features
from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .frozen_features import build_frozen_backbone_model, extract_features
from .knn import weighted_knn_accuracy

__all__ = [
    'build_frozen_backbone_model', 'extract_features', 'cache_digest',
    'cached_features', 'class_balanced_subset',
    'logistic_regression_accuracy', 'weighted_knn_accuracy'
]
