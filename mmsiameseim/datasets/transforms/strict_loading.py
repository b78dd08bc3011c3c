import io
from typing import Optional

import cv2
import mmengine.fileio as fileio
import numpy as np
from mmcv.transforms import LoadImageFromFile
from mmpretrain.registry import TRANSFORMS
from PIL import ExifTags, Image, UnidentifiedImageError

from .image_modes import ImageModeError, array_to_uint8, to_rgb

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
    A file Pillow cannot identify (e.g. a float or 16-bit-per-channel RGB
    TIFF) is decoded by OpenCV as below.

    Every failure is raised naming the file: an unsupported mode or an
    out-of-range 'I' / 'F' image as
    :class:`~mmsiameseim.datasets.transforms.image_modes.ImageModeError`, any
    other (missing, empty, truncated, not an image) as
    :class:`DamagedImageError` (an ``OSError``),
    ``'<path>: cannot load image (...)'``.

    With ``to_pil=True`` (the fast ImageNet pipeline,
    docs/data_pipeline.md) the image stays the Pillow 'RGB' image that
    :func:`~mmsiameseim.datasets.transforms.image_modes.to_rgb` gives (no
    BGR array): ``TwoViewRandomResizedCrop`` crops and resizes it in Pillow
    and turns only each 224 x 224 view into an array. ``img_shape`` and
    ``ori_shape`` are (H, W) either way. A file only OpenCV can read
    becomes a Pillow image of OpenCV's pixels.

    Args:
        imdecode_backend (str): 'pillow' (the mode handling above) or 'cv2'
            (OpenCV's ``IMREAD_COLOR | IMREAD_ANYDEPTH``: EXIF applied,
            alpha dropped, 16-bit samples scaled by 1 / 257, float ones in
            [0, 1] by 255, as
            :func:`~mmsiameseim.datasets.transforms.image_modes.array_to_uint8`;
            truncated files are not detected). Defaults to 'pillow'.
        color_type (str): 'color', 'color_ignore_orientation', 'grayscale'
            or 'grayscale_ignore_orientation'. 'unchanged' is refused: it
            hands raw 16-bit or float samples to transforms that expect
            8-bit ones. Defaults to 'color'.
        to_pil (bool): Give a Pillow 'RGB' image instead of a BGR array
            (needs the 'pillow' backend and a colour ``color_type``, not
            ``to_float32``). Defaults to False.
        **kwargs: Other ``LoadImageFromFile`` arguments (``to_float32``,
            ``backend_args``; ``ignore_empty=True`` returns None for an
            unreadable file, as in mmcv).
    """

    def __init__(self,
                 imdecode_backend: str = 'pillow',
                 color_type: str = 'color',
                 to_pil: bool = False,
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
        if to_pil and (imdecode_backend != 'pillow' or self.to_float32
                       or _COLOR_TYPES[color_type][0]):
            raise ValueError(
                'StrictLoadImageFromFile: to_pil=True gives an 8-bit RGB '
                "Pillow image: it needs imdecode_backend='pillow', a colour "
                'color_type and to_float32=False, got '
                f'{imdecode_backend!r}, {color_type!r}, '
                f'to_float32={self.to_float32}')
        self.to_pil = to_pil

    def _read_bytes(self, filename: str) -> bytes:
        if self.file_client_args is not None:
            client = fileio.FileClient.infer_client(self.file_client_args,
                                                    filename)
            return client.get(filename)
        return fileio.get(filename, backend_args=self.backend_args)

    def _decode_pillow(self, data: bytes, filename: str):
        grey, exif = _COLOR_TYPES[self.color_type]
        try:
            img = Image.open(io.BytesIO(data))
        except UnidentifiedImageError:
            # e.g. a float or 16-bit-per-channel RGB TIFF: OpenCV reads
            # those; if it cannot either, Pillow's error stands
            out = self._decode_opencv(data, filename, fail=None)
            if out is None:
                raise ValueError(
                    'neither Pillow nor OpenCV can read it as an image '
                    f'({len(data)} bytes, starting {data[:16]!r})') from None
            if self.to_pil:
                return Image.fromarray(cv2.cvtColor(out, cv2.COLOR_BGR2RGB))
            return out
        with img:
            if self.to_pil:
                # exif_transpose copies the whole image even when there is
                # nothing to turn: ask for it only when the tag says so
                turn = exif and img.getexif().get(ExifTags.Base.Orientation,
                                                  1) not in (None, 1)
                return to_rgb(img, filename, exif_transpose=turn)
            rgb = to_rgb(img, filename, exif_transpose=exif)
        if grey:
            return np.asarray(rgb.convert('L'))
        return np.ascontiguousarray(np.asarray(rgb)[..., ::-1])  # RGB->BGR

    def _decode_opencv(
        self,
        data: bytes,
        filename: str,
        fail: Optional[str] = 'OpenCV cannot decode it'
    ) -> Optional[np.ndarray]:
        """OpenCV's colour image at any depth, scaled to 8 bits by its type's
        range (then grey, for a grey ``color_type``); None, or ``fail`` raised,
        when it cannot decode it."""
        grey, exif = _COLOR_TYPES[self.color_type]
        flags = cv2.IMREAD_COLOR | cv2.IMREAD_ANYDEPTH
        if not exif:
            flags |= cv2.IMREAD_IGNORE_ORIENTATION
        try:
            img = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
        except cv2.error:  # e.g. an empty buffer
            img = None
        if img is None:
            if fail is None:
                return None
            raise ValueError(fail)
        img = array_to_uint8(img, filename)
        return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if grey else img

    def transform(self, results: dict) -> Optional[dict]:
        filename = results['img_path']
        try:
            data = self._read_bytes(filename)
            if self.imdecode_backend == 'pillow':
                img = self._decode_pillow(data, filename)
            else:
                img = self._decode_opencv(data, filename)
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
        shape = (img.height, img.width) if self.to_pil else img.shape[:2]
        results['img_shape'] = results['ori_shape'] = shape
        return results
