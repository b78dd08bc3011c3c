from .annotation_check import AnnotationChecks, annotation_problem
from .checked_coco import (AnnotationCheckMixin, CheckedCocoDataset,
                           CheckedLVISV1Dataset)

__all__ = [
    'AnnotationChecks', 'annotation_problem', 'AnnotationCheckMixin',
    'CheckedCocoDataset', 'CheckedLVISV1Dataset'
]
