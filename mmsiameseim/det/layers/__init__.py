from .ln2d import LN2d

__all__ = ['LN2d']
