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
        expected = len(views) if self.shared and isinstance(
            views, list) else len(self.pipelines)
        if not isinstance(views, list) or len(views) != expected:
            held = len(views) if isinstance(
                views, list) else 'one image, not a list of views'
            raise ValueError(
                f'PerViewTransforms has {len(self.pipelines)} pipelines but '
                f'results["img"] holds {held}')
        if self.shared:
            img = self.pipelines[0](dict(results, img=views[0]))['img']
            results['img'] = [img] + [img.copy() for _ in views[1:]]
            return results
        out = []
        for view, pipeline in zip(views, self.pipelines):
            view_results = pipeline(dict(results, img=view))
            out.append(view_results['img'])
        results['img'] = out
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(pipelines={self.pipelines}, '
                f'shared={self.shared})')
