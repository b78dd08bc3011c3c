from .annotation_check import AnnotationChecks, annotation_problem
from .checked_coco import (AnnotationCheckMixin, CheckedCocoDataset,
                           CheckedLVISV1Dataset)
from .pad_keep_img_shape import PadKeepImgShape

__all__ = [
    'AnnotationChecks', 'annotation_problem', 'AnnotationCheckMixin',
    'CheckedCocoDataset', 'CheckedLVISV1Dataset', 'PadKeepImgShape'
]
