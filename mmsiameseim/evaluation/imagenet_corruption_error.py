from collections import defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

from mmengine.evaluator import BaseMetric
from mmengine.logging import MMLogger
from mmpretrain.registry import METRICS


@METRICS.register_module()
class ImageNetCorruptionError(BaseMetric):
    """Mean Corruption Error (mCE) on ImageNet-C (Hendrycks & Dietterich).

    For corruption c with top-1 errors E(c, s) at severities s = 1..5:
    ``CE(c) = sum_s E(c, s) / sum_s E_AlexNet(c, s)``, and mCE is the mean of
    CE over the corruptions. The reference is given as AlexNet's mean error
    over the severities per corruption (the published constants), which is
    the same ratio. Needs ``corruption`` and ``severity`` in each sample's
    metainfo (:class:`ImageNetC` + ``PackInputs(meta_keys=...)``).

    Outputs (percent): ``mCE``, ``1-mCE`` (what the SiameseIM paper reports),
    ``top1`` (mean accuracy over all images), and per corruption ``CE/<c>``
    and ``error/<c>`` (mean error over the severities, unnormalised).

    Args:
        alexnet_errors (dict): corruption -> AlexNet top-1 error (fraction)
            averaged over the severities. Every corruption seen must be here.
        severities (Sequence[int]): Severities each corruption must have.
            Defaults to (1, 2, 3, 4, 5).
        collect_device (str): Defaults to 'cpu'.
        prefix (str, optional): Defaults to 'imagenet_c'.
    """
    default_prefix = 'imagenet_c'

    def __init__(self,
                 alexnet_errors: Dict[str, float],
                 severities: Sequence[int] = (1, 2, 3, 4, 5),
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        if not alexnet_errors:
            raise ValueError('alexnet_errors is empty')
        self.alexnet_errors = dict(alexnet_errors)
        self.severities = tuple(int(s) for s in severities)

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            for key in ('corruption', 'severity'):
                if key not in sample:
                    raise KeyError(
                        f"sample {sample.get('img_path')} has no '{key}': use "
                        'the ImageNetC dataset and PackInputs(meta_keys=(..., '
                        "'corruption', 'severity'))")
            correct = int(sample['pred_label'][0]) == int(
                sample['gt_label'][0])
            self.results.append(
                (sample['corruption'], int(sample['severity']), correct))

    def compute_metrics(self, results: List[Tuple[str, int, bool]]) -> dict:
        counts = defaultdict(lambda: [0, 0])  # (c, s) -> [correct, total]
        for corruption, severity, correct in results:
            if corruption not in self.alexnet_errors:
                raise KeyError(f'corruption {corruption!r} has no AlexNet '
                               'error in alexnet_errors')
            counts[(corruption, severity)][0] += correct
            counts[(corruption, severity)][1] += 1
        corruptions = sorted({c for c, _ in counts})
        missing = [(c, s) for c in corruptions for s in self.severities
                   if (c, s) not in counts]
        if missing:
            raise ValueError(
                f'no samples for (corruption, severity) {missing}')
        not_seen = sorted(set(self.alexnet_errors) - set(corruptions))
        if not_seen:
            MMLogger.get_current_instance().warning(
                f'mCE averages {len(corruptions)} corruptions; '
                f'{len(not_seen)} of alexnet_errors were not evaluated: '
                f'{not_seen}')
        metrics = {}
        ces = []
        for c in corruptions:
            err = sum(1 - counts[(c, s)][0] / counts[(c, s)][1]
                      for s in self.severities) / len(self.severities)
            ce = err / self.alexnet_errors[c]
            ces.append(ce)
            metrics[f'error/{c}'] = 100 * err
            metrics[f'CE/{c}'] = 100 * ce
        mce = sum(ces) / len(ces)
        metrics['mCE'] = 100 * mce
        metrics['1-mCE'] = 100 * (1 - mce)
        metrics['top1'] = 100 * sum(r[2] for r in results) / len(results)
        return metrics
