"""Whether the training loop a runner runs resumes exactly inside an epoch,
and mmengine's plain epoch loop swapped for the one that does
(:class:`FaultTolerantRunner` when it builds the loop).

mmengine's ``EpochBasedTrainLoop`` restarts an interrupted epoch from its
first batch after a resume from an iteration checkpoint (a preemption, a
regular ``CheckpointHook(by_epoch=False)``): the run trains the epoch's
done batches twice and ends past its plan (iteration 643 of 640).
:class:`~.exact_resume_loop.ExactResumeEpochBasedTrainLoop` is the same
loop that skips them.
"""
import copy
from logging import Logger
from typing import Callable, Optional, Tuple, Union

from mmengine.registry import LOOPS
from mmengine.runner import BaseLoop, EpochBasedTrainLoop, IterBasedTrainLoop

from .exact_resume_loop import ExactResumeEpochBasedTrainLoop

EXACT = 'ExactResumeEpochBasedTrainLoop'


def _loop_class(loop_cfg: dict) -> Optional[type]:
    """The class a loop config builds (None when the registry of the
    current scope does not know it)."""
    if 'type' not in loop_cfg:
        return EpochBasedTrainLoop if loop_cfg.get('by_epoch') else \
            IterBasedTrainLoop
    kind = loop_cfg['type']
    if isinstance(kind, type):
        return kind
    # the registry of the default scope (mmpretrain, mmdet, mmseg), as
    # the runner's build will look it up
    with LOOPS.switch_scope_and_registry(None) as registry:
        return registry.get(kind)


def exact_loop_cfg(
        loop: Union[BaseLoop, dict]) -> Tuple[Union[BaseLoop, dict], str]:
    """``loop`` with mmengine's ``EpochBasedTrainLoop`` (by ``type`` or
    ``by_epoch=True``) replaced by ``ExactResumeEpochBasedTrainLoop``, and
    the log line that says so ('' when nothing changed).

    Built loops, subclasses and other loops are kept as they are.
    """
    if not isinstance(loop, dict) or _loop_class(loop) is not \
            EpochBasedTrainLoop:
        return loop, ''
    cfg = copy.deepcopy(dict(loop))
    cfg.pop('by_epoch', None)
    cfg['type'] = ExactResumeEpochBasedTrainLoop
    return cfg, (
        "train_cfg: running mmengine's EpochBasedTrainLoop as "
        f'{EXACT} (the same loop, which resumes a checkpoint taken '
        'inside an epoch exactly, where the plain loop replays the epoch '
        'from its first batch and trains past the plan)')


def replay_warning(loop: BaseLoop) -> str:
    """What a resume inside an epoch does under ``loop`` when that is not
    exact, naming the loop to use ('' for an exact loop)."""
    name = type(loop).__name__
    if isinstance(loop, (ExactResumeEpochBasedTrainLoop, IterBasedTrainLoop)):
        return ''
    if isinstance(loop, EpochBasedTrainLoop):
        return (f'{name} replays an interrupted epoch from its first batch '
                'when resumed from a checkpoint taken inside that epoch '
                '(a preemption or an iteration checkpoint): the resumed run '
                'trains those batches twice and ends past '
                f'train_cfg.max_epochs. Use {EXACT} (train_cfg type, or '
                'the base class of a loop of your own) to resume exactly')
    return (f'cannot tell whether {name} resumes exactly from a checkpoint '
            f'taken inside an epoch; {EXACT} (epochs) and '
            'IterBasedTrainLoop (iterations) do')


def replayed_batches(loop: BaseLoop, iteration: int) -> int:
    """How many trained batches ``loop`` trains again when resumed at
    ``iteration`` (0 for an exact loop or an epoch boundary)."""
    if replay_warning(loop) == '' or not isinstance(loop, EpochBasedTrainLoop):
        return 0
    return iteration % len(loop.dataloader)


def overrun_note(loop: BaseLoop, iteration: int) -> str:
    """What resuming a checkpoint of ``iteration`` (iterations trained)
    does to the plan under ``loop`` ('' when it resumes exactly)."""
    replayed = replayed_batches(loop, iteration)
    if not replayed:
        return ''
    per_epoch = len(loop.dataloader)
    return (f'a resume from iteration {iteration} (batch {replayed} of '
            f'{per_epoch} of epoch {iteration // per_epoch + 1}) under '
            f'{type(loop).__name__} trains that epoch\'s first {replayed} '
            f'batches again and ends at iteration {loop.max_iters + replayed}'
            f' of a planned {loop.max_iters}; use {EXACT} to resume exactly')


def build_exact_train_loop(logger: Logger, build: Callable,
                           loop: Union[BaseLoop, dict]) -> BaseLoop:
    """``build(loop)`` (mmengine's ``Runner.build_train_loop``) with the
    plain epoch loop run as the exact-resume one (:func:`exact_loop_cfg`,
    logged), and a built loop that would replay an interrupted epoch named
    in a warning (:func:`replay_warning`)."""
    loop, note = exact_loop_cfg(loop)
    if note:
        logger.info(note)
    loop = build(loop)
    warning = replay_warning(loop)
    if warning:
        logger.warning(warning)
    return loop


def warn_overrun(logger: Logger,
                 loop: BaseLoop,
                 iteration: int,
                 where: str = '') -> None:
    """Warn, after ``where``, when a resume at ``iteration`` under ``loop``
    is not exact (:func:`overrun_note`)."""
    overrun = overrun_note(loop, iteration)
    if overrun:
        logger.warning(where + overrun)
