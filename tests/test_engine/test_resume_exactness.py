"""A resume inside an epoch under any loop FaultTolerantRunner runs: mmengine's
plain EpochBasedTrainLoop (a user's own config, mmpretrain's or mmdet's)
runs as ExactResumeEpochBasedTrainLoop and resumes exactly; a loop that
would still replay the epoch is named at start, at each checkpoint inside an
epoch and at the resume, with the iteration the run will end at."""
import pytest
import torch
from mmengine.registry import DefaultScope
from mmengine.runner import EpochBasedTrainLoop
from mmpretrain.registry import LOOPS

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.runner import (ExactResumeEpochBasedTrainLoop,
                                       FaultTolerantRunner)
from mmsiameseim.engine.runner.exact_resume_loop import _SkipBatches
from mmsiameseim.engine.runner.resume_exactness import exact_loop_cfg
from tests.helpers import logged
from tests.test_engine.test_exact_resume_loop import (EPOCHS, ITERS_PER_EPOCH,
                                                      _cfg, _CountIters,
                                                      _Crash, _CrashAfter,
                                                      _state)

MAX_ITERS = EPOCHS * ITERS_PER_EPOCH


@LOOPS.register_module(force=True)
class ReplayingLoop(EpochBasedTrainLoop):
    """A loop of one's own on mmengine's plain one: it replays."""


def _train(cfg, hook=None):
    runner = FaultTolerantRunner.from_cfg(cfg)
    if hook is not None:
        runner.register_hook(hook)
    with logged() as log:
        runner.train()
    return runner, log.getvalue()


def _plain(cfg, **loop):
    cfg.train_cfg = dict(loop, max_epochs=EPOCHS)
    return cfg


@pytest.fixture(scope='module')
def straight(tmp_path_factory):
    cfg = _cfg(tmp_path_factory.mktemp('straight'))
    return _state(_train(cfg)[0])


@pytest.mark.person_matrix(
    'resume', 'mixing',
    "mmengine's plain EpochBasedTrainLoop (type or by_epoch=True) under "
    'FaultTolerantRunner runs as ExactResumeEpochBasedTrainLoop, saying so: '
    'a resume inside an epoch trains the 4 iterations left, not 5, and '
    'ends at the plan with the weights of the uninterrupted run')
@pytest.mark.parametrize('loop', [
    dict(type='EpochBasedTrainLoop'),
    dict(by_epoch=True),
])
def test_the_plain_epoch_loop_resumes_exactly(straight, tmp_path, loop):
    cfg = _plain(_cfg(tmp_path), **loop)
    runner = FaultTolerantRunner.from_cfg(cfg)
    runner.register_hook(_CrashAfter(8))
    with logged() as log, pytest.raises(_Crash):
        runner.train()
    assert type(runner.train_loop) is ExactResumeEpochBasedTrainLoop
    assert "running mmengine's EpochBasedTrainLoop as " \
        'ExactResumeEpochBasedTrainLoop' in log.getvalue()
    counter = _CountIters()
    resumed, text = _train(
        _plain(_cfg(tmp_path, resume=True), **loop), counter)
    assert counter.steps == [(6, 1), (7, 2), (8, 3), (9, 4)]
    assert resumed.iter == MAX_ITERS
    assert 'again' not in text and 'Use ExactResume' not in text
    state = _state(resumed)
    assert state['lr'] == pytest.approx(straight['lr'], abs=1e-12)
    for key, value in straight['weights'].items():
        torch.testing.assert_close(
            state['weights'][key], value, rtol=0, atol=1e-6, msg=key)


@pytest.mark.person_matrix(
    'resume', 'mixing',
    'a loop of its own that replays an interrupted epoch is named at start, '
    'at each checkpoint written inside an epoch and at --resume, naming '
    'ExactResumeEpochBasedTrainLoop and the iteration the run will end at '
    '(which it then ends at)')
def test_a_replaying_loop_is_named_with_where_it_will_end(tmp_path):
    cfg = _plain(_cfg(tmp_path), type='ReplayingLoop')
    runner = FaultTolerantRunner.from_cfg(cfg)
    runner.register_hook(_CrashAfter(8))
    with logged() as log, pytest.raises(_Crash):
        runner.train()
    text = log.getvalue()
    assert 'ReplayingLoop replays an interrupted epoch' in text
    assert 'Use ExactResumeEpochBasedTrainLoop' in text
    # iteration checkpoints at 3 and 6: both inside an epoch of 5
    assert 'iter_3.pth is inside an epoch: a resume from iteration 3 ' \
        '(batch 3 of 5 of epoch 1) under ReplayingLoop trains that ' \
        "epoch's first 3 batches again and ends at iteration 13 of a " \
        'planned 10' in text
    assert 'iter_6.pth is inside an epoch' in text
    resumed, text = _train(
        _plain(_cfg(tmp_path, resume=True), type='ReplayingLoop'))
    assert 'a resume from iteration 6 (batch 1 of 5 of epoch 2) under ' \
        'ReplayingLoop trains' in text
    assert 'ends at iteration 11 of a planned 10' in text
    assert resumed.iter == 11  # what the warning said


def test_detection_and_segmentation_loops(tmp_path):
    """mmdet's epoch loop (its configs name mmengine's) is swapped in
    mmdet's scope; an iteration loop (mmseg's) is kept and not warned
    about."""
    with DefaultScope.overwrite_default_scope('mmdet'):
        cfg, note = exact_loop_cfg(
            dict(type='EpochBasedTrainLoop', max_epochs=12, val_interval=1))
        assert cfg['type'] is ExactResumeEpochBasedTrainLoop
        assert cfg['val_interval'] == 1 and note
    with DefaultScope.overwrite_default_scope('mmseg'):
        loop = dict(type='IterBasedTrainLoop', max_iters=10)
        assert exact_loop_cfg(loop) == (loop, '')


def test_aspect_ratio_batches_are_skipped_exactly():
    """mmdet's AspectRatioBatchSampler does not cut its sampler's order
    into consecutive batches: the skip is by batches, so the resumed epoch
    gets exactly the remaining batches."""
    from mmdet.datasets.samplers import AspectRatioBatchSampler
    from mmengine.dataset import DefaultSampler

    class Boxes(torch.utils.data.Dataset):

        def __len__(self):
            return 40

        def get_data_info(self, i):
            wide = (i * 7) % 3 == 0
            return dict(width=64 if wide else 32, height=32 if wide else 64)

    sampler = DefaultSampler(Boxes(), shuffle=True, seed=3)
    batches = AspectRatioBatchSampler(sampler, batch_size=4)
    whole = list(batches)
    assert [i for b in whole[:3] for i in b] != list(sampler)[:12]
    for done in (1, 3, 5):
        assert list(_SkipBatches(batches, done)) == whole[done:]
    skip = _SkipBatches(batches, 2)
    assert len(skip) == len(whole) and list(skip) == whole[2:]
    assert list(skip) == whole[2:]  # a DataLoader may iterate it twice
    skip.n = 0  # the loop, at the end of the epoch
    assert list(skip) == whole
