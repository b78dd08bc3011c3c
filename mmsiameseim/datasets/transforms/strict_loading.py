import io
from typing import Optional

from mmcv.transforms import LoadImageFromFile
from mmengine import fileio
from mmpretrain.registry import TRANSFORMS
from PIL import Image


def _to_rgb(img: Image.Image, path: str) -> Image.Image:
    """The decoded image as 8-bit RGB.

    THE ONE PLACE that turns a freshly opened file into RGB for the PIL
    path, until ``image_modes.to_rgb`` (unusual modes: 16-bit, CMYK,
    palette, EXIF rotation) lands: then this calls it.
    """
    if img.mode == 'RGB':
        img.load()  # decode now, so a broken file fails here
        return img
    return img.convert('RGB')


@TRANSFORMS.register_module()
class StrictLoadImageFromFile(LoadImageFromFile):
    """``LoadImageFromFile`` that fails loudly, naming the file.

    mmcv's loader re-raises decoder errors without the path, and OpenCV
    decodes a truncated JPEG into a partly grey image without any error. By
    default this loader decodes with Pillow, which refuses truncated files,
    and every failure is raised as ``OSError('<path>: <reason>')``.

    With ``to_pil=True`` the image stays a Pillow RGB image (no BGR numpy
    array): the fast ImageNet pipeline crops, resizes and colours it in
    Pillow and turns each view into an array once, at the end
    (``PILToArray``). ``img_shape`` and ``ori_shape`` are (H, W) either way.

    Args:
        imdecode_backend (str): Defaults to 'pillow'.
        to_pil (bool): Give a ``PIL.Image`` (RGB) instead of a BGR array.
            Defaults to False.
        **kwargs: ``LoadImageFromFile`` arguments (``ignore_empty=True``
            still skips unreadable files, as in mmcv).
    """

    def __init__(self,
                 imdecode_backend: str = 'pillow',
                 to_pil: bool = False,
                 **kwargs) -> None:
        super().__init__(imdecode_backend=imdecode_backend, **kwargs)
        if to_pil and self.to_float32:
            raise ValueError('StrictLoadImageFromFile: to_pil=True gives a '
                             'uint8 PIL image; to_float32=True cannot apply')
        self.to_pil = to_pil

    def _load_pil(self, results: dict) -> dict:
        path = results['img_path']
        data = fileio.get(path, backend_args=self.backend_args)
        img = _to_rgb(Image.open(io.BytesIO(data)), path)
        results['img'] = img
        results['img_shape'] = results['ori_shape'] = (img.height, img.width)
        return results

    def transform(self, results: dict) -> Optional[dict]:
        try:
            if self.to_pil:
                return self._load_pil(results)
            out = super().transform(results)
        except Exception as e:  # noqa: BLE001  (any decoder error)
            if self.ignore_empty:
                return None
            raise OSError(f'{results.get("img_path")}: cannot load image '
                          f'({type(e).__name__}: {e})') from e
        return out

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f', to_pil={self.to_pil})'
