from .device_augment import DeviceAugmentDataPreprocessor

__all__ = ['DeviceAugmentDataPreprocessor']
