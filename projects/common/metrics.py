"""The studies' one metric vocabulary: the key each results file stores a
score under, and its names in prose, in table headings and on charts."""
from typing import NamedTuple


class Metric(NamedTuple):
    """How one score is named.

    Args:
        prose (str): In sentences (the readings of the tables).
        heading (str): As a table column.
        label (str): On a chart's axis.
    """
    prose: str
    heading: str
    label: str


VOCABULARY = dict(
    knn=Metric('kNN top-1', 'kNN top-1', 'kNN'),
    linear=Metric('linear probe top-1', 'linear probe top-1', 'linear probe'),
    fewshot=Metric('1 % few-shot top-1', '1 % few-shot top-1', '1 % few-shot'),
    dense_miou=Metric('dense mIoU', 'dense mIoU', 'dense mIoU'),
    dense_accuracy=Metric('dense per-patch accuracy', 'dense per-patch acc.',
                          'dense per-patch acc.'),
    dense_boundary_iou=Metric('dense boundary IoU', 'dense boundary IoU',
                              'dense boundary IoU'),
    dense_lowshot_miou=Metric('low-shot dense mIoU', 'low-shot dense mIoU',
                              'low-shot dense mIoU'),
    dense_lowshot_boundary_iou=Metric('low-shot dense boundary IoU',
                                      'low-shot boundary IoU',
                                      'low-shot boundary IoU'),
    images_per_s=Metric('images/s', 'images/s', 'images/s'),
)
# the frozen-backbone protocol's scores (FrozenBackboneProtocol)
PROTOCOL_METRICS = ('knn', 'linear', 'fewshot')
# the dense probe's (MosaicDenseProbe)
DENSE_METRICS = ('dense_miou', 'dense_accuracy')
# the scattered dense probe's other scores (ScatteredMosaicProbe)
SCATTERED_METRICS = ('dense_boundary_iou', 'dense_lowshot_miou',
                     'dense_lowshot_boundary_iou')
# every score a study run gets: the claim study's columns
METRICS = PROTOCOL_METRICS + DENSE_METRICS
# the miniature downstream study's scores (the keys mmdet's CocoMetric and
# LVISMetric and mmseg's IoUMetric log) and their table headings
DOWNSTREAM_HEADINGS = {
    'coco/bbox_mAP': 'COCO box AP',
    'coco/segm_mAP': 'COCO mask AP',
    'coco/bbox_mAP_50': 'COCO box AP<sub>50</sub>',
    'coco/segm_mAP_50': 'COCO mask AP<sub>50</sub>',
    'lvis/bbox_AP': 'LVIS box AP',
    'lvis/bbox_APr': 'LVIS box AP<sub>r</sub>',
    'lvis/segm_AP': 'LVIS mask AP',
    'lvis/segm_APr': 'LVIS mask AP<sub>r</sub>',
    'mIoU': 'ADE20k mIoU',
}
# the scores logged as percentages (mmseg's IoUMetric); mmdet's CocoMetric and
# LVISMetric log fractions
DOWNSTREAM_PERCENTAGES = frozenset({'mIoU'})
# the prose name of each score
METRIC_NAMES = {key: m.prose for key, m in VOCABULARY.items()}


def headings(keys) -> list:
    """The table headings of the metrics ``keys``."""
    return [VOCABULARY[k].heading for k in keys]


def stats_cells(stats: dict, keys) -> list:
    """'mean ± sd (min-max)' of the stats of each metric of ``keys`` (a
    study's summary over seeds); the mean alone for one run, '-' for
    none."""
    cells = []
    for m in keys:
        st = stats.get(m)
        if not st:
            cells.append('-')
        elif st['sd'] is None:
            cells.append(f'{st["mean"]:.2f}')
        else:
            cells.append(f'{st["mean"]:.2f} ± {st["sd"]:.2f} '
                         f'({st["min"]:.2f}-{st["max"]:.2f})')
    return cells
