from typing import Optional

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmpretrain.registry import HOOKS

# The model parts whose num_classes must be the dataset's class count.
PARTS = ('head', 'data_preprocessor', 'decode_head', 'auxiliary_head',
         'roi_head.bbox_head', 'roi_head.mask_head', 'bbox_head')


@HOOKS.register_module()
class ClassCountCheckHook(Hook):
    """Refuse, before the first step of training, validation or testing, a
    classifier whose number of classes is not its dataset's.

    A config for your own labelled folder cannot know how many classes the
    folder has: ``model.head.num_classes`` (and the data preprocessor's
    ``num_classes``, which Mixup / CutMix one-hot labels with), an mmseg
    model's ``decode_head`` and ``auxiliary_head`` ``num_classes``, or an
    mmdet model's ``roi_head.bbox_head`` and ``roi_head.mask_head`` (or a
    one-stage ``bbox_head``) ``num_classes``, must be given. Too few
    classes would fail inside the loss at the first batch with a bare index
    error (a detector trains a whole epoch, then the COCO metric stops with
    one); too many would train logits that no image has. This hook compares
    each of them that the model has with the ``classes`` of the loop's
    dataset metainfo and names the options to set. In an mmseg or mmdet
    config: ``type='mmpretrain.ClassCountCheckHook'``.
    """

    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        self.check(runner, runner.train_dataloader, 'train_dataloader')

    def before_val(self, runner) -> None:
        self.check(runner, runner.val_loop.dataloader, 'val_dataloader')

    def before_test(self, runner) -> None:
        self.check(runner, runner.test_loop.dataloader, 'test_dataloader')

    @staticmethod
    def check(runner, loader, option: str) -> None:
        dataset = loader.dataset
        classes = getattr(dataset, 'metainfo', {}).get('classes')
        if not classes:
            return
        model = runner.model.module if is_model_wrapper(runner.model) \
            else runner.model
        found = len(classes)
        counts = {
            f'model.{part}.num_classes': _num_classes(model, part)
            for part in PARTS
        }
        wrong = {k: v for k, v in counts.items() if _differs(v, found)}
        if wrong:
            where = getattr(dataset, 'data_root', '') or type(dataset).__name__
            shown = ', '.join(map(str, classes[:5])) + \
                (', ...' if found > 5 else '')
            raise ValueError(
                'ClassCountCheckHook: ' +
                ', '.join(f'{k}={v}' for k, v in wrong.items()) +
                f', but the dataset of {option} ({where}) has {found} '
                f'classes ({shown}); add --cfg-options ' +
                ' '.join(f'{k}={found}'
                         for k in counts if counts[k] is not None))


def _num_classes(model, part: str) -> Optional[int]:
    for name in part.split('.'):
        model = getattr(model, name, None)
    if getattr(model, 'class_agnostic', False):
        return None  # one output for every class
    count = getattr(model, 'num_classes', None)
    return count if isinstance(count, int) else None


def _differs(count: Optional[int], found: int) -> bool:
    return count is not None and count != found
