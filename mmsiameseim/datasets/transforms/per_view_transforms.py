from typing import List, Sequence

from mmcv.transforms import BaseTransform, Compose
from mmpretrain.registry import TRANSFORMS


@TRANSFORMS.register_module()
class PerViewTransforms(BaseTransform):
    """Apply a different pipeline to each view in ``results['img']``.

    Use after ``TwoViewRandomResizedCrop`` to give view a and view b their
    own colour augmentations (any registered transforms that work on one
    image, e.g. mmpretrain's ``ColorJitter``, ``RandomGrayscale``,
    ``GaussianBlur``, ``Solarize``). Only ``img`` is taken from each view's
    pipeline; the other keys stay as they were.

    Args:
        pipelines (list[list[dict]]): One transform list per view.
    """

    def __init__(self, pipelines: Sequence[Sequence[dict]]) -> None:
        self.pipelines: List[Compose] = [
            Compose([
                TRANSFORMS.build(t) if isinstance(t, dict) else t for t in p
            ]) for p in pipelines
        ]

    def transform(self, results: dict) -> dict:
        views = results['img']
        if not isinstance(views, list) or len(views) != len(self.pipelines):
            raise ValueError(
                f'PerViewTransforms has {len(self.pipelines)} pipelines but '
                f'results["img"] holds {len(views) if isinstance(views, list) else "one image, not a list of views"}')
        out = []
        for view, pipeline in zip(views, self.pipelines):
            view_results = pipeline(dict(results, img=view))
            out.append(view_results['img'])
        results['img'] = out
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(pipelines={self.pipelines})'
