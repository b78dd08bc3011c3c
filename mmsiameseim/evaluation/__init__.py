from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .knn import weighted_knn_accuracy

__all__ = [
    'class_balanced_subset', 'logistic_regression_accuracy',
    'weighted_knn_accuracy'
]
