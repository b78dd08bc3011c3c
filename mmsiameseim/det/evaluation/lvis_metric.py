import contextlib
from typing import Iterator

import numpy as np
from mmdet.evaluation import LVISMetric
from mmdet.registry import METRICS

# Aliases numpy 1.24 removed that lvis 0.5.3 (the PyPI release) still uses,
# e.g. ``astype(dtype=np.float)`` in LVISEval.accumulate.
_REMOVED_ALIASES = {'float': float, 'int': int, 'bool': bool}


@contextlib.contextmanager
def numpy_aliases_for_lvis() -> Iterator[None]:
    """Temporarily restore the builtin aliases (``np.float`` ...) numpy 2
    removed; only missing ones are added and they are removed on exit, so the
    rest of the process keeps numpy's own behaviour."""
    added = [name for name in _REMOVED_ALIASES if name not in vars(np)]
    for name in added:
        setattr(np, name, _REMOVED_ALIASES[name])
    try:
        yield
    finally:
        for name in added:
            delattr(np, name)


@METRICS.register_module()
class NumpyAliasLVISMetric(LVISMetric):
    """mmdet's ``LVISMetric`` with the LVIS API run under
    :func:`numpy_aliases_for_lvis`, so PyPI's ``lvis==0.5.3`` works on
    numpy 2.

    Arguments are those of ``LVISMetric`` (``metric``, ``ann_file``, ...);
    results are its ``lvis/bbox_AP``, ``lvis/bbox_APr``, ``lvis/segm_AP`` ...
    keys.
    """

    def compute_metrics(self, results: list) -> dict:
        with numpy_aliases_for_lvis():
            return super().compute_metrics(results)
