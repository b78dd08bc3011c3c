from .vitdet_vit import ViTDetViT

__all__ = ['ViTDetViT']
