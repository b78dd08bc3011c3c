"""SiameseIM on mmdet: ViTDet (plain ViT + SimpleFPN) for Mask R-CNN.

Imported only by mmdet configs through
``custom_imports=dict(imports=['mmsiameseim.det'])``; registers into mmdet's
registries. Importing it also imports :mod:`mmsiameseim` (checkpoint
compatibility layer used when loading our pretraining checkpoints).
Without mmcv's compiled ops it stops at once, naming ``make setup-full``.
"""
import mmsiameseim  # noqa: F401
from mmsiameseim.full_stack import require_full_stack

require_full_stack('mmsiameseim.det', 'mmdet')

# F401 is ignored in every __init__.py (setup.cfg); naming it here too makes
# the line too long, and isort and yapf then wrap it each their own way.
# isort: off
from . import backbones, datasets, evaluation, layers  # noqa: E402
from . import necks, optimizers  # noqa: E402
# isort: on
