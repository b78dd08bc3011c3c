"""SiameseIM on mmdet: ViTDet (plain ViT + SimpleFPN) for Mask R-CNN.

Imported only by mmdet configs through
``custom_imports=dict(imports=['mmsiameseim.det'])``; registers into mmdet's
registries. Importing it also imports :mod:`mmsiameseim` (checkpoint
compatibility layer used when loading our pretraining checkpoints).
"""
import mmsiameseim  # noqa: F401

from . import backbones, evaluation, layers, necks, optimizers  # noqa: F401
