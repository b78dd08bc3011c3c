"""Makes mmcv 2.1's ``adjust_hue`` work with numpy 2.

mmcv's pillow path shifts the hue channel with
``np_h += np.uint8(hue_factor * 255)``; numpy 2 raises ``OverflowError`` for
a negative ``hue_factor`` (numpy 1 wrapped it around). mmpretrain's
``ColorJitter`` draws ``hue_factor`` from [-hue, hue], so the MoCo-v3 colour
set of the SiameseIM ImageNet configs would crash on about half of the images.
The replacement below wraps the shift modulo 256 as numpy 1 did (the
behaviour torchvision's PIL ``adjust_hue`` also has) and leaves the cv2 path
and every other case to mmcv.
"""
import mmcv
import numpy as np
from mmcv.image import photometric
from PIL import Image

_original_adjust_hue = photometric.adjust_hue


def shift_hue(pil: Image.Image, hue_factor: float) -> Image.Image:
    """Shift the hue of an RGB PIL image by ``hue_factor`` (in [-0.5, 0.5])
    of a turn, wrapping around on the uint8 hue channel as numpy 1 did."""
    h, s, v = pil.convert('HSV').split()
    np_h = np.array(h, dtype=np.uint8)
    np_h += np.uint8(int(hue_factor * 255) % 256)  # uint8 wrap-around
    return Image.merge('HSV',
                       (Image.fromarray(np_h, 'L'), s, v)).convert('RGB')


def adjust_hue(img: np.ndarray, hue_factor: float, backend=None) -> np.ndarray:
    """``mmcv.adjust_hue`` with a numpy-2-safe pillow path."""
    backend = backend or photometric.imread_backend
    if backend != 'pillow' or hue_factor >= 0 or hue_factor < -0.5 \
            or not isinstance(img, np.ndarray) or img.ndim != 3 \
            or img.dtype != np.uint8:
        return _original_adjust_hue(img, hue_factor, backend=backend)
    out = shift_hue(Image.fromarray(img[..., ::-1], mode='RGB'), hue_factor)
    return np.array(out, dtype=img.dtype)[..., ::-1]


mmcv.adjust_hue = photometric.adjust_hue = adjust_hue
mmcv.image.adjust_hue = adjust_hue
