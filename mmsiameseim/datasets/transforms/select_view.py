import numpy as np
from mmcv.transforms import BaseTransform
from mmpretrain.registry import TRANSFORMS


@TRANSFORMS.register_module()
class SelectView(BaseTransform):
    """Keep one view of a multi-view sample, for single-view algorithms.

    Lets a single-view method (mmpretrain's SimMIM, MAE, ...) train on the
    views of ``TwoViewRandomResizedCrop`` (+ ``PerViewTransforms``,
    ``BlockwiseMaskGenerator``), e.g. exactly SiameseIM's view a and mask.

    **Required keys**: ``img`` (a list of views).

    **Modified keys**: ``img`` (the kept view), ``img_shape``, and, when
    present, ``crop_boxes`` (4,) and ``flips`` () of the kept view.

    Args:
        index (int): The view to keep: 0 for view a (the masked, online
            view), 1 for view b. Defaults to 0.
    """

    def __init__(self, index: int = 0) -> None:
        if index not in (0, 1):
            raise ValueError(f'SelectView index must be 0 or 1, got {index}')
        self.index = index

    def transform(self, results: dict) -> dict:
        views = results.get('img')
        if not isinstance(views, list) or len(views) <= self.index:
            raise ValueError(
                f'SelectView(index={self.index}) needs results["img"] to be '
                'a list of views (put it after TwoViewRandomResizedCrop), '
                f'got {type(views).__name__}')
        img = views[self.index]
        results['img'] = img
        results['img_shape'] = img.shape[:2]
        for key in ('crop_boxes', 'flips'):
            if key in results:
                results[key] = np.asarray(results[key])[self.index]
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(index={self.index})'
