from .min_iter_schedulers import MinIterCosineAnnealingLR, MinIterLinearLR

__all__ = ['MinIterCosineAnnealingLR', 'MinIterLinearLR']
