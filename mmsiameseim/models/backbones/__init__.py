from .siameseim_vit import SiameseIMViT

__all__ = ['SiameseIMViT']
