from .pad_keep_img_shape import PadKeepImgShape

__all__ = ['PadKeepImgShape']
