"""Strict image loading: :class:`StrictLoadImageFromFile` (a damaged file
is an error naming it, :class:`DamagedImageError`) and the image modes it
reads.

Every image mode Pillow can open, brought to 8-bit RGB at its real
brightness and orientation.

``PIL.Image.convert('RGB')`` is right for most modes but not for the
high-bit-depth ones: it clips 16-bit ('I;16'), 32-bit integer ('I') and
float ('F') samples at 255, so a 16-bit PNG becomes an almost white image.
:func:`to_rgb` scales those by the range of their sample type instead and
handles the rest as the ecosystem does (torchvision's and timm's
``convert('RGB')``, mmcv's Pillow backend, OpenCV's ``IMREAD_COLOR``):

============================  ==============================================
mode                          8-bit RGB value
============================  ==============================================
'1', 'L'                      the grey level on all three channels (1 -> 255)
'P'                           the palette colour
'RGB', 'RGBX'                 as stored; Pillow reads a 16-bit RGB PNG by
                              each sample's high byte (v >> 8, within one
                              level of v / 257)
'LA', 'PA', 'RGBA'            the colour under the alpha, alpha dropped (as
                              ``convert('RGB')`` and ``IMREAD_COLOR`` do;
                              transparent pixels keep their stored colour)
'P' with a transparency key   the palette colour, transparency dropped
'CMYK', 'YCbCr', 'HSV'        Pillow's conversion to RGB
'I;16', 'I;16L', 'I;16B',     16-bit grey: round(v / 257), so 65535 -> 255
'I;16N'
'I'                           32-bit integer container Pillow uses for
                              16-bit samples (PNG, PNM, TIFF): round(v / 257);
                              a value outside [0, 65535] is refused
'F'                           float in [0, 1] (the float image convention):
                              round(v * 255); a value outside [0, 1] or a
                              non-finite one is refused
============================  ==============================================

Files Pillow cannot open at all (e.g. float RGB TIFFs) are decoded by OpenCV
in ``StrictLoadImageFromFile`` and scaled by :func:`array_to_uint8` the same
way. No mode is min/max-stretched: a dark 16-bit image stays dark. An EXIF
orientation tag is applied first (``ImageOps.exif_transpose``), so the
pixels come out the way a viewer shows them. An animated GIF or WebP gives
its first frame. Any other mode (e.g. 'LAB', 'I;16S', 'BGR;15') is refused
with an :class:`ImageModeError` naming the file and the mode.
"""
import io
import logging
from typing import Optional

import cv2
import mmengine.fileio as fileio
import numpy as np
from mmcv.transforms import LoadImageFromFile
from mmengine.logging import print_log
from mmpretrain.registry import TRANSFORMS
from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

#: Modes that Pillow converts to RGB correctly (8-bit samples).
DIRECT_MODES = ('1', 'L', 'P', 'RGB', 'RGBX', 'CMYK', 'YCbCr', 'HSV')
#: 8-bit modes with an alpha band: alpha is dropped.
ALPHA_MODES = ('LA', 'PA', 'RGBA')
#: 16-bit grey modes: scaled by 1 / 257.
SIXTEEN_BIT_MODES = ('I;16', 'I;16L', 'I;16B', 'I;16N')
#: Every mode :func:`to_rgb` accepts.
SUPPORTED_MODES = DIRECT_MODES + ALPHA_MODES + SIXTEEN_BIT_MODES + ('I', 'F')


class ImageModeError(ValueError):
    """An image whose mode or sample range has no documented 8-bit reading; the
    message names the file, the mode and what was expected."""


def array_to_uint8(values: np.ndarray,
                   path: str,
                   what: Optional[str] = None) -> np.ndarray:
    """8-bit samples of a decoded array, scaled by the range of its type.

    uint8 is kept; uint16 becomes round(v / 257); float becomes round(v *
    255) and must lie in [0, 1]. Nothing is stretched between its minimum and
    maximum. Used for Pillow's 'I;16' / 'F' images and for OpenCV's
    ``IMREAD_ANYDEPTH`` arrays.

    Args:
        values (np.ndarray): The samples, any shape.
        path (str): The file they came from, named in every error.
        what (str, optional): How errors name the samples. Defaults to their
            dtype.

    Raises:
        ImageModeError: Another dtype, or floats outside [0, 1] or not
            finite.
    """
    what = what or f'{values.dtype} samples'
    if values.dtype == np.uint8:
        return values
    if values.dtype.kind == 'u' and values.dtype.itemsize == 2:
        return np.rint(values / 257.).astype(np.uint8)
    if values.dtype.kind == 'f':
        if values.size and not np.isfinite(values).all():
            raise ImageModeError(
                f'{path}: {what} hold NaN or infinite values; finite values '
                'in [0, 1] were expected')
        if values.size and (values.min() < 0. or values.max() > 1.):
            raise ImageModeError(
                f'{path}: {what} are read as values in [0, 1], found values '
                f'in [{values.min():.6g}, {values.max():.6g}]; scale the file '
                'to [0, 1] or save it as 8- or 16-bit')
        return np.rint(values.astype(np.float64) * 255.).astype(np.uint8)
    raise ImageModeError(
        f'{path}: {what} have no documented 8-bit reading; uint8, uint16 or '
        'float samples in [0, 1] were expected')


def check_mode(mode: str, path: str) -> None:
    """Raise :class:`ImageModeError` naming ``path`` unless :func:`to_rgb`
    reads ``mode``."""
    if mode not in SUPPORTED_MODES:
        raise ImageModeError(
            f'{path}: image mode {mode!r} is not supported; expected one of '
            f'{", ".join(SUPPORTED_MODES)}')


def _scaled_grey(img: Image.Image, path: str) -> Image.Image:
    """A 16-bit ('I;16*', 'I') or float ('F') grey image as 8-bit RGB."""
    values = np.asarray(img)
    if img.mode == 'I':
        if values.size and (values.min() < 0 or values.max() > 65535):
            raise ImageModeError(
                f'{path}: mode I (32-bit integer) is read as 16-bit samples '
                f'in [0, 65535], found values in [{int(values.min())}, '
                f'{int(values.max())}]; convert the file to 8- or 16-bit '
                'first')
        values = values.astype(np.uint16)
    what = 'mode F (32-bit float) samples' if img.mode == 'F' \
        else f'mode {img.mode}'
    grey = array_to_uint8(values, path, what)
    return Image.fromarray(np.repeat(grey[..., None], 3, axis=2), 'RGB')


def to_rgb(img: Image.Image,
           path: str,
           *,
           exif_transpose: bool = True) -> Image.Image:
    """The 8-bit 'RGB' image of ``img`` at its real brightness and orientation
    (the table in this module's docstring).

    Args:
        img (PIL.Image.Image): An opened image, any mode in
            :data:`SUPPORTED_MODES`.
        path (str): The file it came from, named in every error.
        exif_transpose (bool): Apply the EXIF orientation tag.
            Defaults to True.

    Returns:
        PIL.Image.Image: A decoded image of mode 'RGB', the same size as
        ``img`` (width and height swapped by a 90-degree EXIF rotation).

    Raises:
        ImageModeError: The mode is not supported, or an 'I' / 'F' image
            holds values outside its documented range.
        OSError: The file cannot be decoded (truncated or damaged), from
            Pillow, unchanged.
    """
    if getattr(img, 'is_animated', False):
        img.seek(0)  # the first frame of an animated GIF / WebP / PNG
    check_mode(img.mode, path)
    img.load()  # decode now, so that a truncated file fails here
    if exif_transpose:
        img = ImageOps.exif_transpose(img)
    if img.mode == 'RGB':
        return img
    if img.mode in SIXTEEN_BIT_MODES + ('I', 'F'):
        return _scaled_grey(img, path)
    if img.mode == 'P' and 'transparency' in img.info:
        img = img.convert('RGBA')  # Pillow's route for a transparency key
    return img.convert('RGB')  # alpha, if any, is dropped


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
    :func:`to_rgb`: 1-bit, grey,
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
    :class:`ImageModeError`, any
    other (missing, empty, truncated, not an image) as
    :class:`DamagedImageError` (an ``OSError``),
    ``'<path>: cannot load image (...)'``.

    With ``to_pil=True`` (the fast ImageNet pipeline,
    docs/data_pipeline.md) the image stays the Pillow 'RGB' image that
    :func:`to_rgb` gives (no
    BGR array): ``TwoViewRandomResizedCrop`` crops and resizes it in Pillow
    and turns only each 224 x 224 view into an array. ``img_shape`` and
    ``ori_shape`` are (H, W) either way. A file only OpenCV can read
    becomes a Pillow image of OpenCV's pixels.

    Args:
        imdecode_backend (str): 'pillow' (the mode handling above) or 'cv2'
            (OpenCV's ``IMREAD_COLOR | IMREAD_ANYDEPTH``: EXIF applied,
            alpha dropped, 16-bit samples scaled by 1 / 257, float ones in
            [0, 1] by 255, as
            :func:`array_to_uint8`;
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
            unreadable file, as in mmcv, so that mmengine's dataset draws
            another sample in its place; each such file is named in a
            warning with the running count of files replaced, kept in
            ``skipped``, per process).
    """

    def __init__(self,
                 imdecode_backend: str = 'pillow',
                 color_type: str = 'color',
                 to_pil: bool = False,
                 **kwargs) -> None:
        if imdecode_backend not in ('pillow', 'cv2') or \
                color_type not in _COLOR_TYPES:
            raise ValueError(
                "StrictLoadImageFromFile: imdecode_backend must be 'pillow' "
                f"or 'cv2' and color_type one of {sorted(_COLOR_TYPES)} "
                '(8-bit output only: raw 16-bit or float samples would be '
                'misread by the transforms that follow), got '
                f'imdecode_backend={imdecode_backend!r}, color_type='
                f'{color_type!r}')
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
        #: files replaced under ``ignore_empty`` (per process)
        self.skipped = []

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
        if img is None and fail is not None:
            raise ValueError(fail)
        if img is None:
            return None
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
        except Exception as e:  # noqa: BLE001  (any decoder error)
            if self.ignore_empty:
                self.skipped.append(filename)
                print_log(
                    f'StrictLoadImageFromFile: {filename}: cannot load image '
                    f'({type(e).__name__}: {e}); ignore_empty=True: the '
                    'dataset gives another sample in its place; '
                    f'{len(self.skipped)} file(s) replaced so far in this '
                    'process',
                    logger='current',
                    level=logging.WARNING)
                return None
            if isinstance(e, ImageModeError):
                raise
            raise DamagedImageError(f'{filename}: cannot load image '
                                    f'({type(e).__name__}: {e})') from e
        if self.to_float32:
            img = img.astype(np.float32)
        results['img'] = img
        shape = (img.height, img.width) if self.to_pil else img.shape[:2]
        results['img_shape'] = results['ori_shape'] = shape
        return results
