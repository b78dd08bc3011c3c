"""SiameseIM for OpenMMLab.

Importing this package registers the mmpretrain-side components (models,
transforms, datasets, hooks, metrics) into mmpretrain's registries and
applies the checkpoint compatibility layer. ``mmsiameseim.det`` /
``mmsiameseim.seg`` register into mmdet / mmseg and are imported only by
their configs. The demo, Table 3, side-by-side and benchmark code lives
beside the plugin in ``mmsiameseim_lab``, which this package never imports.
"""
from . import compat  # noqa: F401  (must come first: checkpoint loading)
from . import config_syntax_fix  # noqa: F401  (a config's syntax error)
from . import mmcv_hue_fix  # noqa: F401  (numpy 2: negative hue jitter)
from . import transformers_guard  # noqa: F401  (before mmpretrain.models)
from . import checkpoint, datasets, engine, evaluation, models  # noqa: F401
from .version import __version__

__all__ = ['__version__']
