from .siameseim import SiameseIM, SiameseIMDistributedDataParallel

__all__ = ['SiameseIM', 'SiameseIMDistributedDataParallel']
