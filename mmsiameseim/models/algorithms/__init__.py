from .siameseim import SiameseIM

__all__ = ['SiameseIM']
