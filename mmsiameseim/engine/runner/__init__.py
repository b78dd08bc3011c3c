from .exact_resume_loop import ExactResumeEpochBasedTrainLoop

__all__ = ['ExactResumeEpochBasedTrainLoop']
