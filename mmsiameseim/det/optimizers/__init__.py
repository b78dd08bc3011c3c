from .layer_decay_constructor import ViTLayerDecayOptimWrapperConstructor

__all__ = ['ViTLayerDecayOptimWrapperConstructor']
