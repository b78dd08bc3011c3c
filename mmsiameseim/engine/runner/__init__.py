from .exact_resume_loop import ExactResumeEpochBasedTrainLoop
from .fault_tolerant_runner import FaultTolerantRunner, RunRefused

__all__ = [
    'ExactResumeEpochBasedTrainLoop', 'FaultTolerantRunner', 'RunRefused'
]
