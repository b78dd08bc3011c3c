import io
from typing import Optional

import mmcv
import mmengine.fileio as fileio
import numpy as np
from mmcv.transforms import LoadImageFromFile
from mmpretrain.registry import TRANSFORMS
from PIL import Image

from .image_modes import ImageModeError, to_rgb

#: ``color_type`` values and what each means with the Pillow backend:
#: (grey output, apply the EXIF orientation).
_COLOR_TYPES = {
    'color': (False, True),
    'color_ignore_orientation': (False, False),
    'grayscale': (True, True),
    'grayscale_ignore_orientation': (True, False),
}


class DamagedImageError(OSError):
    """A file that cannot be read as an image (missing, empty, truncated, not
    an image); the message names it."""


@TRANSFORMS.register_module()
class StrictLoadImageFromFile(LoadImageFromFile):
    """``LoadImageFromFile`` that reads every image mode right and fails
    loudly, naming the file.

    With the default Pillow backend the image goes through
    :func:`~mmsiameseim.datasets.transforms.image_modes.to_rgb`: 1-bit, grey,
    palette, alpha, CMYK, YCbCr, 16-bit, 32-bit integer and float images,
    EXIF-rotated JPEGs and animated GIF / WebP (first frame) all become 8-bit
    images at their real brightness and orientation (mmcv's own Pillow path
    clips 16-bit samples at 255, giving a white image). The image is stored
    in BGR channel order, as mmcv's loaders do (the data preprocessors'
    ``to_rgb=True`` expects that). Pillow also refuses truncated files,
    where OpenCV decodes them into a partly grey image without an error.

    Every failure is raised naming the file: an unsupported mode or an
    out-of-range 'I' / 'F' image as
    :class:`~mmsiameseim.datasets.transforms.image_modes.ImageModeError`, any
    other (missing, empty, truncated, not an image) as
    :class:`DamagedImageError` (an ``OSError``),
    ``'<path>: cannot load image (...)'``.

    Args:
        imdecode_backend (str): 'pillow' (the mode handling above) or 'cv2'
            (OpenCV's ``IMREAD_COLOR``: 8-bit, EXIF applied, alpha dropped;
            truncated files are not detected). Defaults to 'pillow'.
        color_type (str): 'color', 'color_ignore_orientation', 'grayscale'
            or 'grayscale_ignore_orientation'. 'unchanged' is refused: it
            hands raw 16-bit or float samples to transforms that expect
            8-bit ones. Defaults to 'color'.
        **kwargs: Other ``LoadImageFromFile`` arguments (``to_float32``,
            ``backend_args``; ``ignore_empty=True`` returns None for an
            unreadable file, as in mmcv).
    """

    def __init__(self,
                 imdecode_backend: str = 'pillow',
                 color_type: str = 'color',
                 **kwargs) -> None:
        if imdecode_backend not in ('pillow', 'cv2'):
            raise ValueError(
                "StrictLoadImageFromFile: imdecode_backend must be 'pillow' "
                f"or 'cv2', got {imdecode_backend!r}")
        if color_type not in _COLOR_TYPES:
            raise ValueError(
                f'StrictLoadImageFromFile: color_type must be one of '
                f'{sorted(_COLOR_TYPES)}, got {color_type!r} (8-bit output '
                'only: raw 16-bit or float samples would be misread by the '
                'transforms that follow)')
        super().__init__(
            imdecode_backend=imdecode_backend, color_type=color_type, **kwargs)

    def _read_bytes(self, filename: str) -> bytes:
        if self.file_client_args is not None:
            client = fileio.FileClient.infer_client(self.file_client_args,
                                                    filename)
            return client.get(filename)
        return fileio.get(filename, backend_args=self.backend_args)

    def _decode_pillow(self, data: bytes, filename: str) -> np.ndarray:
        grey, exif = _COLOR_TYPES[self.color_type]
        with Image.open(io.BytesIO(data)) as img:
            rgb = to_rgb(img, filename, exif_transpose=exif)
        if grey:
            return np.asarray(rgb.convert('L'))
        return np.ascontiguousarray(np.asarray(rgb)[..., ::-1])  # RGB->BGR

    def transform(self, results: dict) -> Optional[dict]:
        filename = results['img_path']
        try:
            data = self._read_bytes(filename)
            if self.imdecode_backend == 'pillow':
                img = self._decode_pillow(data, filename)
            else:
                img = mmcv.imfrombytes(
                    data, flag=self.color_type, backend='cv2')
                if img is None:
                    raise ValueError('OpenCV cannot decode it')
                if img.dtype != np.uint8:
                    raise ImageModeError(f'{filename}: OpenCV decoded '
                                         f'{img.dtype} samples, 8-bit '
                                         'expected')
        except ImageModeError:
            if self.ignore_empty:
                return None
            raise
        except Exception as e:  # noqa: BLE001  (any decoder error)
            if self.ignore_empty:
                return None
            raise DamagedImageError(f'{filename}: cannot load image '
                                    f'({type(e).__name__}: {e})') from e
        if self.to_float32:
            img = img.astype(np.float32)
        results['img'] = img
        results['img_shape'] = img.shape[:2]
        results['ori_shape'] = img.shape[:2]
        return results
