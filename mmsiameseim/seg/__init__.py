"""mmseg side of mmsiameseim; imported by mmseg configs only, through
``custom_imports=dict(imports=['mmsiameseim.seg'], ...)``.

Without mmcv's compiled ops it stops at once, naming ``make setup-full``.
"""
from mmsiameseim.full_stack import require_full_stack

require_full_stack('mmsiameseim.seg', 'mmseg')

from .mae_checkpoint import siameseim_to_mmseg_mae  # noqa: E402
from .segmentation_folder import SegmentationFolder  # noqa: E402
from .siameseim_mae import SiameseIMMAE  # noqa: E402

__all__ = ['SegmentationFolder', 'SiameseIMMAE', 'siameseim_to_mmseg_mae']
