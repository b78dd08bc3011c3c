from mmdet.datasets.transforms import Pad
from mmdet.registry import TRANSFORMS


@TRANSFORMS.register_module()
class PadKeepImgShape(Pad):
    """mmdet's ``Pad`` that leaves ``img_shape`` the image's own size.

    ViTDet's large-scale-jitter test pads every resized image to the fixed
    training canvas (1024 x 1024 in the paper), so that the backbone sees
    the input size it was trained on (the position table and the global
    blocks' relative position tables at their training grid). mmcv's
    ``Pad`` records the canvas as ``img_shape`` as well as ``pad_shape``;
    mmdet clips predicted boxes to ``img_shape``, so a box predicted in
    the padding of a non-square image survives, is rescaled beyond the
    original image, and mask pasting fails on it on a CPU
    (``RuntimeError: upper bound and lower bound inconsistent with step
    sign``) or pastes an empty mask outside the image on a GPU, which the
    metric then counts. Here the canvas is ``pad_shape`` only: boxes are
    clipped to the image itself and rescaled into the original image, as
    detectron2's ViTDet does (``ImageList.image_sizes``).

    Args:
        **kwargs: ``Pad``'s arguments (``size``, ``pad_val``, ...).
    """

    def transform(self, results: dict) -> dict:
        img_shape = results['img'].shape[:2]
        results = super().transform(results)
        results['img_shape'] = img_shape
        return results
