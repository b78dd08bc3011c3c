"""Every image mode Pillow can open, brought to 8-bit RGB at its real
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
from typing import Optional

import numpy as np
from PIL import Image, ImageOps

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


def _grey_to_rgb(grey: np.ndarray) -> Image.Image:
    return Image.fromarray(np.repeat(grey[..., None], 3, axis=2), 'RGB')


def _scale_16bit(img: Image.Image, path: str) -> Image.Image:
    values = np.asarray(img)
    if img.mode == 'I':
        if values.size and (values.min() < 0 or values.max() > 65535):
            raise ImageModeError(
                f'{path}: mode I (32-bit integer) is read as 16-bit samples '
                f'in [0, 65535], found values in [{int(values.min())}, '
                f'{int(values.max())}]; convert the file to 8- or 16-bit '
                'first')
        values = values.astype(np.uint16)
    return _grey_to_rgb(array_to_uint8(values, path, f'mode {img.mode}'))


def _scale_float(img: Image.Image, path: str) -> Image.Image:
    return _grey_to_rgb(
        array_to_uint8(np.asarray(img), path, 'mode F (32-bit float) samples'))


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
    mode = img.mode
    if mode == 'RGB':
        return img
    if mode in SIXTEEN_BIT_MODES or mode == 'I':
        return _scale_16bit(img, path)
    if mode == 'F':
        return _scale_float(img, path)
    if mode == 'P' and 'transparency' in img.info:
        img = img.convert('RGBA')  # Pillow's route for a transparency key
    return img.convert('RGB')  # alpha, if any, is dropped
