from .imagenet_subset import ImageNetSubset
from .transforms import *  # noqa: F401,F403

__all__ = ['ImageNetSubset']
