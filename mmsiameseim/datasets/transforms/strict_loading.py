from typing import Optional

from mmcv.transforms import LoadImageFromFile
from mmpretrain.registry import TRANSFORMS


@TRANSFORMS.register_module()
class StrictLoadImageFromFile(LoadImageFromFile):
    """``LoadImageFromFile`` that fails loudly, naming the file.

    mmcv's loader re-raises decoder errors without the path, and OpenCV
    decodes a truncated JPEG into a partly grey image without any error. By
    default this loader decodes with Pillow, which refuses truncated files,
    and every failure is raised as ``OSError('<path>: <reason>')``.

    Args:
        imdecode_backend (str): Defaults to 'pillow'.
        **kwargs: ``LoadImageFromFile`` arguments (``ignore_empty=True``
            still skips unreadable files, as in mmcv).
    """

    def __init__(self, imdecode_backend: str = 'pillow', **kwargs) -> None:
        super().__init__(imdecode_backend=imdecode_backend, **kwargs)

    def transform(self, results: dict) -> Optional[dict]:
        try:
            out = super().transform(results)
        except Exception as e:  # noqa: BLE001  (any decoder error)
            if self.ignore_empty:
                return None
            raise OSError(f'{results.get("img_path")}: cannot load image '
                          f'({type(e).__name__}: {e})') from e
        return out
