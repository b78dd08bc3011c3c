from .autocast_optim_wrapper import AutocastOptimWrapper
from .skip_frozen_constructor import SkipFrozenOptimWrapperConstructor

__all__ = ['AutocastOptimWrapper', 'SkipFrozenOptimWrapperConstructor']
