"""mmseg side of mmsiameseim; imported by mmseg configs only, through
``custom_imports=dict(imports=['mmsiameseim.seg'], ...)``."""
from .mae_checkpoint import format_report, siameseim_to_mmseg_mae
from .siameseim_mae import SiameseIMMAE

__all__ = ['SiameseIMMAE', 'siameseim_to_mmseg_mae', 'format_report']
