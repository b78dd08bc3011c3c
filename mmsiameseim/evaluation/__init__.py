from .class_subset_accuracy import ClassSubsetAccuracy
from .feature_cache import cache_digest, cached_features, file_identity
from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .frozen_features import (batch_features, build_frozen_backbone_model,
                              extract_features, pool_backbone_output)
from .imagenet_corruption_error import ImageNetCorruptionError
from .knn import weighted_knn_accuracy
from .knn_curve import plot_knn_curve, read_knn_scalars
from .linear_probe import (linear_probe_accuracy, match_probe_backbone,
                           probe_config, set_probe_epochs)
from .precision import (autocast, native_bf16, set_training_precision)
from .demo_report import (describe_pretraining, draw_pipeline_sample,
                          write_demo_report)
from .pretraining import (initial_weights, prepare_pretrain_cfg,
                          pretrain_once, set_max_epochs)
from .protocol import FrozenBackboneProtocol
from .seed_table import format_seed_table, mean_spread
from .table3 import (miniature_cfg, paper_results, row_configs,
                     table3_factors, write_table3_report)
from .report_io import atomic_json, atomic_write, load_json

__all__ = [
    'build_frozen_backbone_model', 'extract_features', 'batch_features',
    'pool_backbone_output', 'cache_digest', 'cached_features',
    'file_identity',
    'class_balanced_subset', 'logistic_regression_accuracy',
    'weighted_knn_accuracy', 'ClassSubsetAccuracy', 'ImageNetCorruptionError',
    'read_knn_scalars', 'plot_knn_curve', 'probe_config',
    'match_probe_backbone', 'set_probe_epochs', 'linear_probe_accuracy',
    'autocast', 'native_bf16', 'set_training_precision', 'pretrain_once',
    'initial_weights', 'set_max_epochs', 'FrozenBackboneProtocol',
    'atomic_json', 'atomic_write', 'load_json', 'prepare_pretrain_cfg',
    'describe_pretraining', 'draw_pipeline_sample', 'write_demo_report',
    'miniature_cfg', 'paper_results', 'row_configs', 'table3_factors',
    'write_table3_report', 'format_seed_table', 'mean_spread'
]
