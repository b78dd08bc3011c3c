from .lvis_metric import NumpyAliasLVISMetric, numpy_aliases_for_lvis

__all__ = ['NumpyAliasLVISMetric', 'numpy_aliases_for_lvis']
