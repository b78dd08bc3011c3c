from typing import List, Optional, Sequence

import torch
from mmengine.evaluator import BaseMetric
from mmpretrain.registry import METRICS


@METRICS.register_module()
class ClassSubsetAccuracy(BaseMetric):
    """Top-1 accuracy of a classifier restricted to a subset of its classes.

    ImageNet-A and ImageNet-R hold 200 of the 1000 ImageNet-1k classes; the
    standard protocol (Hendrycks et al.) takes the argmax of the 1000-way
    scores over those 200 classes only.

    Args:
        class_subset (Sequence[int], optional): Class indices to keep. By
            default they are read from the dataset's
            ``metainfo['class_subset']`` (set by :class:`ImageNetWnidFolder`
            from its folder names).
        collect_device (str): Defaults to 'cpu'.
        prefix (str, optional): Defaults to 'subset_accuracy'.
    """
    default_prefix = 'subset_accuracy'

    def __init__(self,
                 class_subset: Optional[Sequence[int]] = None,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.class_subset = None if class_subset is None else list(
            class_subset)

    def _subset(self) -> List[int]:
        if self.class_subset is not None:
            return self.class_subset
        if not self.dataset_meta or 'class_subset' not in self.dataset_meta:
            raise KeyError(
                'ClassSubsetAccuracy needs class_subset=... or a dataset '
                "whose metainfo has 'class_subset' (e.g. ImageNetWnidFolder)")
        return list(self.dataset_meta['class_subset'])

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        subset = torch.as_tensor(self._subset())
        for sample in data_samples:
            score = sample['pred_score']
            if int(subset.max()) >= score.numel():
                raise ValueError(
                    f'class_subset index {int(subset.max())} is out of range '
                    f'for {score.numel()} predicted classes')
            pred = subset[score[subset].argmax()]
            self.results.append(int(pred) == int(sample['gt_label'][0]))

    def compute_metrics(self, results: List[bool]) -> dict:
        return dict(
            top1=100.0 * sum(results) / len(results),
            num_classes=float(len(self._subset())))
