"""SiameseIM for OpenMMLab.

Importing this package registers the mmpretrain-side components (models,
transforms, datasets, hooks, metrics) into mmpretrain's registries and
applies the import-time patches of other libraries (all of them in
:mod:`mmsiameseim.patches`, each with the upstream defect it works around),
and lets configs inherit the shipped ones as ``mmsiameseim::CONFIG``.
The mmdet and mmseg sides, ``mmsiameseim.det`` and ``mmsiameseim.seg``,
register into their registries and are imported only by their configs. The
studies built on the plugin (the demo, the claim, Table 3, side by side,
the benchmarks) are the checkout's ``projects/``, which this package never
imports.
"""
from . import patches  # noqa: F401  (first: before mmpretrain.models)
from . import checkpoint, datasets, engine, evaluation, models  # noqa: F401
from .version import __version__

__all__ = ['__version__']
