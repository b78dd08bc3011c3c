from typing import Optional

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class ClassCountCheckHook(Hook):
    """Refuse, before the first step of training, validation or testing, a
    classifier whose number of classes is not its dataset's.

    A config for your own labelled folder cannot know how many classes the
    folder has: ``model.head.num_classes`` (and the data preprocessor's
    ``num_classes``, which Mixup / CutMix one-hot labels with), or an mmseg
    model's ``decode_head`` and ``auxiliary_head`` ``num_classes``, must be
    given. Too few classes would fail inside the loss at the first batch
    with a bare index error; too many would train logits that no image
    has. This hook compares each of them that the model has with the
    ``classes`` of the loop's dataset metainfo and names the options to
    set. In an mmseg config: ``type='mmpretrain.ClassCountCheckHook'``.
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
            f'model.{part}.num_classes':
            getattr(getattr(model, part, None), 'num_classes', None)
            for part in ('head', 'data_preprocessor', 'decode_head',
                         'auxiliary_head')
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


def _differs(count: Optional[int], found: int) -> bool:
    return count is not None and count != found
