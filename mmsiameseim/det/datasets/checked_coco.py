import logging
from typing import List

from mmdet.datasets import CocoDataset, LVISV1Dataset
from mmdet.registry import DATASETS
from mmengine.logging import print_log

from .annotation_check import AnnotationChecks

OPTION = 'max_bad_annotation_fraction'


class AnnotationCheckMixin:
    """Check a COCO-format file's annotations while mmdet reads it.

    mmdet's ``CocoDataset`` leaves out, without a word, an annotation whose
    box lies outside its image, is thinner than a pixel or has no area, or
    whose ``category_id`` is not a selected category, and ignores an
    instance whose polygons are all degenerate; annotations of an image
    that is not in the file are never read. Here each of those (see
    :func:`~.annotation_check.annotation_problem`; also boxes reaching past
    the image's border, RLE masks of another size) is named with its image
    and annotation id, counted and dropped; above
    ``max_bad_annotation_fraction`` of the file's annotations the dataset
    is refused, otherwise a WARNING gives the count.
    """

    def __init__(self,
                 *args,
                 max_bad_annotation_fraction: float = 0.01,
                 check_masks: bool = True,
                 **kwargs) -> None:
        if not 0. <= max_bad_annotation_fraction <= 1.:
            raise ValueError(f'{type(self).__name__}: {OPTION} must be in '
                             f'[0, 1], got {max_bad_annotation_fraction!r}')
        self.max_bad_annotation_fraction = max_bad_annotation_fraction
        self.check_masks = check_masks
        self._checks = None
        super().__init__(*args, **kwargs)

    #: Where the dataset sits in a config, for the option in messages.
    train_option_prefix = 'train_dataloader.dataset.'

    def _api(self):
        return getattr(self, 'coco', None) or getattr(self, 'lvis')

    def load_data_list(self) -> List[dict]:
        prefix = ('val_dataloader.dataset.'
                  if self.test_mode else self.train_option_prefix)
        self._checks = AnnotationChecks(
            type(self).__name__, self.ann_file,
            self.max_bad_annotation_fraction, prefix + OPTION, self.test_mode)
        data_list = super().load_data_list()
        self._checks.finish()
        return data_list

    def start_checks(self, api) -> None:
        """Once per file, before its first image: the classes, and the
        annotations of images the file does not have."""
        self._checks.orphans(api.anns, api.imgs)

    def parse_data_info(self, raw_data_info: dict):
        api = self._api()
        if not self._checks.started:
            self._checks.started = True
            self.start_checks(api)
        img = raw_data_info['raw_img_info']
        good = self._checks.keep(raw_data_info['raw_ann_info'], img, api.cats,
                                 self.check_masks)
        return super().parse_data_info(dict(raw_data_info, raw_ann_info=good))


@DATASETS.register_module()
class CheckedCocoDataset(AnnotationCheckMixin, CocoDataset):
    """mmdet's ``CocoDataset`` that checks the annotation file when built
    (:class:`AnnotationCheckMixin`) and refuses class names the file does
    not have.

    mmdet selects categories by the names of ``metainfo.classes`` (COCO's 80
    by default) and leaves out any name the file lacks without a word, so
    a file of other categories, or a misspelt class, trains on fewer
    classes than the config says or on none.

    Args:
        max_bad_annotation_fraction (float): The share of bad annotations
            (of all in the file) that refuses it, in [0, 1]; below, they
            are dropped with a WARNING naming each. Defaults to 0.01.
        check_masks (bool): Check each annotation's segmentation too.
            Defaults to True (Mask R-CNN).
        **kwargs: ``CocoDataset``'s arguments.
    """

    def start_checks(self, api) -> None:
        names = [c.get('name') for c in api.cats.values()]
        missing = [c for c in self.metainfo['classes'] if c not in names]
        if missing:
            shown = ', '.join(map(repr, names[:20])) + \
                (', ...' if len(names) > 20 else '')
            raise ValueError(
                f'{type(self).__name__}: {len(missing)} of the '
                f'{len(self.metainfo["classes"])} classes are not categories '
                f'of {self.ann_file}: {", ".join(map(repr, missing[:20]))}; '
                f'the file has {len(names)}: {shown}. Set metainfo.classes '
                'to the names to train on, e.g. --cfg-options '
                '"train_dataloader.dataset.metainfo.classes=[...]" and the '
                'same for val_dataloader and test_dataloader')
        super().start_checks(api)


@DATASETS.register_module()
class CheckedLVISV1Dataset(AnnotationCheckMixin, LVISV1Dataset):
    """mmdet's ``LVISV1Dataset`` that checks the annotation file when built
    (:class:`AnnotationCheckMixin`), with the file's categories as its
    ``classes``.

    mmdet's LVIS dataset trains on every category of the file but keeps
    the 1203 LVIS v1 names as ``classes``; here they are the file's own
    names (in id order, as the labels), so that a class-count check and
    the metric's class names see the file's categories.

    Args:
        max_bad_annotation_fraction (float): As
            :class:`CheckedCocoDataset`. Defaults to 0.01.
        check_masks (bool): As :class:`CheckedCocoDataset`.
        **kwargs: ``LVISV1Dataset``'s arguments.
    """

    # inside ClassBalancedDataset in the shipped configs
    train_option_prefix = 'train_dataloader.dataset.dataset.'

    def start_checks(self, api) -> None:
        classes = tuple(api.cats[i]['name'] for i in self.cat_ids)
        if classes != tuple(self._metainfo['classes']):
            print_log(
                f'{type(self).__name__}: {len(classes)} classes from '
                f'{self.ann_file} (not the {len(self._metainfo["classes"])} '
                'of metainfo.classes)',
                logger='current',
                level=logging.INFO)
        self._metainfo['classes'] = classes
        super().start_checks(api)
