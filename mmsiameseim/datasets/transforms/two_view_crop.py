"""The two views of SiameseIM: :class:`TwoViewRandomResizedCrop` (two crops
of one image, their geometry recorded) and :class:`PerViewTransforms` (each
view its own transforms).
"""
from types import SimpleNamespace
from typing import List, Optional, Sequence, Tuple, Union

import cv2
import mmcv
import numpy as np
from mmcv.transforms import BaseTransform, Compose
from mmengine.utils import to_2tuple
from mmpretrain.datasets.transforms import RandomResizedCrop
from mmpretrain.registry import TRANSFORMS
from PIL import Image

_PIL_FILTERS = {
    name: getattr(Image, name.upper())
    for name in ('nearest', 'bilinear', 'bicubic', 'box', 'lanczos', 'hamming')
}


@TRANSFORMS.register_module()
class TwoViewRandomResizedCrop(BaseTransform):
    """Two independent random resized crops and flips of one image, with their
    geometry recorded.

    **Required keys**: ``img`` (H x W, H x W x C uint8; C = 3 or 4 fine;
    or a Pillow image, see below).

    **Modified keys**: ``img`` (list ``[view_a, view_b]``), ``img_shape``.

    **Added keys**: the crop geometry, which SiameseIM needs packed as
    algorithm keys (``PackInputs(algorithm_keys=['crop_boxes', 'flips',
    'crop_source_shape'])``):

    - ``crop_boxes`` float32 (2, 4) = (top, left, height, width) of each
      view in pixels of the image this transform received, unflipped;
    - ``flips`` bool (2,), whether each view was flipped;
    - ``crop_source_shape`` (H, W) of the image this transform received
      (after any ``Pad`` or resize before it), the frame of ``crop_boxes``.

    ``ori_shape`` (the loaded image's shape) is left as it was.

    Crop parameters are mmpretrain's ``RandomResizedCrop``'s, which follow
    torchvision's (10 attempts, then a centre crop clamped to the ratio
    range). Images smaller than the output size are upsampled.

    Resizing: ``backend='pillow'`` resizes as the authors' torchvision
    pipeline does (PIL ``Image.resize`` of the crop, which widens its kernel
    when shrinking, i.e. antialiases: the ImageNet configs use it);
    ``backend='cv2'`` uses OpenCV (``mmcv.imresize``: faster, but its
    bicubic samples the source without antialiasing, so it aliases fine
    detail when shrinking; the default, kept for the Fashion-MNIST configs,
    whose crops are only ever enlarged).

    A Pillow image in ``img`` (``StrictLoadImageFromFile(to_pil=True)``,
    the fast ImageNet pipeline) is cropped and resized in Pillow without
    any array conversion before (needs ``backend='pillow'``); each view
    then becomes a BGR uint8 array (one conversion of 224 x 224 pixels
    instead of the whole image). The pixels are those of the authors'
    torchvision pipeline: ``Image.crop`` then ``Image.resize`` (as
    ``torchvision.transforms.functional.resized_crop``; a ``box=`` resize
    would differ at the borders, it reads pixels outside the crop), and
    the flip after the resize (equal to their flip before the crop,
    tested).

    Args:
        size (int | tuple): Output size of view a (h, w or one int).
        scale (tuple): Range of the crop area fraction. Defaults to
            (0.08, 1.0).
        ratio (tuple): Range of the crop aspect ratio (w / h). Defaults to
            (3/4, 4/3).
        flip_prob (float): Probability of a horizontal flip, per view.
            Defaults to 0.5.
        interpolation (str): Interpolation: 'nearest', 'bilinear',
            'bicubic', 'lanczos' (either backend), 'area' (cv2), 'box',
            'hamming' (pillow). Defaults to 'bicubic'.
        backend (str): 'cv2' or 'pillow' (see above). Defaults to 'cv2'.
        target_size (int | tuple, optional): Output size of view b when it
            differs from view a (lower-resolution target). Defaults to None.
        same_view (bool): One crop and flip for both views, so view b is a
            copy of view a (the single-view rows of the paper's ablation
            table). Defaults to False.
    """

    def __init__(self,
                 size: Union[int, Sequence[int]],
                 scale: Tuple[float, float] = (0.08, 1.0),
                 ratio: Tuple[float, float] = (3. / 4., 4. / 3.),
                 flip_prob: float = 0.5,
                 interpolation: str = 'bicubic',
                 backend: str = 'cv2',
                 target_size: Optional[Union[int, Sequence[int]]] = None,
                 same_view: bool = False) -> None:
        self.size = tuple(to_2tuple(size))
        self.target_size = tuple(to_2tuple(target_size or size))
        for wrong, message in (
            (not 0 < scale[0] <= scale[1] <= 1,
             f'scale must satisfy 0 < min <= max <= 1, got {scale}'),
            (not 0 < ratio[0] <= ratio[1],
             f'ratio must satisfy 0 < min <= max, got {ratio}'),
            (not 0 <= flip_prob <= 1,
             f'flip_prob must be in [0, 1], got {flip_prob}'),
            (backend not in ('cv2', 'pillow'),
             f"backend must be 'cv2' or 'pillow', got {backend!r}"),
            (backend == 'pillow' and interpolation not in _PIL_FILTERS,
             f'interpolation {interpolation!r} is not a PIL filter; choose '
             f'from {sorted(_PIL_FILTERS)}'),
            (same_view and self.target_size != self.size,
             'same_view=True needs target_size equal to size')):
            if wrong:
                raise ValueError(message)
        self.scale, self.ratio, self.flip_prob = scale, ratio, flip_prob
        self.interpolation, self.backend = interpolation, backend
        self.same_view = same_view
        self._crop = RandomResizedCrop(self.size, scale, ratio)

    def crop_params(self, height: int,
                    width: int) -> Tuple[int, int, int, int]:
        """Random (top, left, h, w) of one crop: mmpretrain's
        ``RandomResizedCrop`` parameters (torchvision's algorithm), which
        read only the image's shape."""
        return self._crop.rand_crop_params(
            SimpleNamespace(shape=(height, width)))

    def resize(self, img: np.ndarray, size: Tuple[int, int]) -> np.ndarray:
        """``img`` resized to ``size`` (w, h) with the chosen backend."""
        if self.backend == 'cv2':
            return mmcv.imresize(img, size, interpolation=self.interpolation)
        resample = _PIL_FILTERS[self.interpolation]
        # a contiguous copy first: PIL's fromarray of a strided crop is
        # ~50x slower than the copy
        img = np.ascontiguousarray(img)
        if img.ndim == 2 or img.shape[2] == 3:
            return np.asarray(Image.fromarray(img).resize(size, resample))
        # band by band: PIL would resize RGBA with premultiplied alpha
        bands = [self.resize(img[..., c], size) for c in range(img.shape[2])]
        return np.stack(bands, axis=-1)

    def crop_resize_flip(self, img: Union[np.ndarray, Image.Image],
                         box: Tuple[int, int, int,
                                    int], size: Tuple[int, int], flip: bool):
        """One view: ``box`` (top, left, h, w) of ``img`` resized to
        ``size`` (w, h), then flipped if ``flip``; a numpy array (BGR from
        a PIL RGB image)."""
        top, left, h, w = box
        if isinstance(img, Image.Image):
            view = img.crop((left, top, left + w, top + h))
            view = view.resize(size, _PIL_FILTERS[self.interpolation])
            if flip:
                view = view.transpose(Image.FLIP_LEFT_RIGHT)
            view = np.asarray(view)
            # OpenCV's channel swap: 5x numpy's strided copy
            return cv2.cvtColor(view, cv2.COLOR_RGB2BGR) if view.ndim == 3 \
                else np.array(view)
        view = self.resize(img[top:top + h, left:left + w], size)
        return np.ascontiguousarray(view[:, ::-1]) if flip else view

    def transform(self, results: dict) -> dict:
        img = results['img']
        if isinstance(img, Image.Image):
            if self.backend != 'pillow':
                raise ValueError(
                    'TwoViewRandomResizedCrop got a PIL image (a loader with '
                    "to_pil=True) but has backend='cv2'; use "
                    "backend='pillow' or load a numpy array")
            width, height = img.size
        elif isinstance(img, np.ndarray) and img.ndim in (2, 3):
            height, width = img.shape[:2]
        else:
            raise TypeError('TwoViewRandomResizedCrop needs one H x W [x C] '
                            'numpy image or a PIL image in results["img"], '
                            f'got {type(img)}')
        views, boxes, flips = [], [], []
        for out_h, out_w in (self.size, self.target_size):
            if not (self.same_view and views):
                box = self.crop_params(height, width)
                flip = bool(np.random.rand() < self.flip_prob)
                view = self.crop_resize_flip(img, box, (out_w, out_h), flip)
            views.append(view.copy() if views and self.same_view else view)
            boxes.append(box)
            flips.append(flip)
        results['img'] = views
        results['img_shape'] = self.size
        results['crop_source_shape'] = (height, width)
        results['crop_boxes'] = np.asarray(boxes, dtype=np.float32)
        results['flips'] = np.asarray(flips, dtype=bool)
        return results

    def __repr__(self) -> str:
        keys = ('size', 'target_size', 'scale', 'ratio', 'flip_prob',
                'interpolation', 'backend', 'same_view')
        return f'{type(self).__name__}(' + ', '.join(f'{k}={getattr(self, k)}'
                                                     for k in keys) + ')'


@TRANSFORMS.register_module()
class PerViewTransforms(BaseTransform):
    """Apply a different pipeline to each view in ``results['img']``.

    Use after ``TwoViewRandomResizedCrop`` to give view a and view b their
    own colour augmentations (any registered transforms that work on one
    image, e.g. mmpretrain's ``ColorJitter``, ``RandomGrayscale``,
    ``GaussianBlur``, ``Solarize``). Only ``img`` is taken from each view's
    pipeline; the other keys stay as they were.

    Args:
        pipelines (list[list[dict]]): One transform list per view; with
            ``shared=True``, exactly one list.
        shared (bool): Apply the one pipeline once, to view a, and give every
            view that same result (single-view training with colour
            augmentation: the target sees exactly the input's colours).
            Defaults to False.
    """

    def __init__(self,
                 pipelines: Sequence[Sequence[dict]],
                 shared: bool = False) -> None:
        if shared and len(pipelines) != 1:
            raise ValueError('PerViewTransforms(shared=True) takes exactly '
                             f'one pipeline, got {len(pipelines)}')
        self.shared = shared
        self.pipelines: List[Compose] = [
            Compose(
                [TRANSFORMS.build(t) if isinstance(t, dict) else t for t in p])
            for p in pipelines
        ]

    def transform(self, results: dict) -> dict:
        views = results['img']
        if not isinstance(views, list) or not (self.shared or len(views)
                                               == len(self.pipelines)):
            held = len(views) if isinstance(
                views, list) else 'one image, not a list of views'
            raise ValueError(
                f'PerViewTransforms has {len(self.pipelines)} pipelines but '
                f'results["img"] holds {held}')
        if self.shared:
            img = self.pipelines[0](dict(results, img=views[0]))['img']
            results['img'] = [img] + [img.copy() for _ in views[1:]]
        else:
            results['img'] = [
                pipeline(dict(results, img=view))['img']
                for view, pipeline in zip(views, self.pipelines)
            ]
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(pipelines={self.pipelines}, '
                f'shared={self.shared})')
