import hashlib

import pytest
import torch
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from tests.helpers import TwoViewSamples, tiny_siameseim_cfg


def _runner(work_dir,
            lr=1e-3,
            loss_interval=1,
            nan=False,
            resume=False,
            max_epochs=3):
    """The tiny model with iteration checkpoints after every step."""
    return Runner(
        model=tiny_siameseim_cfg(),
        work_dir=str(work_dir),
        train_dataloader=dict(
            dataset=TwoViewSamples(nan=nan),
            sampler=dict(type='DefaultSampler', shuffle=False),
            batch_size=4,
            collate_fn=dict(type='default_collate')),
        train_cfg=dict(
            type='ExactResumeEpochBasedTrainLoop', max_epochs=max_epochs),
        optim_wrapper=dict(optimizer=dict(type='AdamW', lr=lr)),
        default_hooks=dict(
            checkpoint=dict(type='CheckpointHook', by_epoch=False,
                            interval=1)),
        custom_hooks=[
            dict(type='StopOnNonFiniteLossHook', interval=loss_interval)
        ],
        randomness=dict(seed=0),
        resume=resume,
        default_scope='mmpretrain')


def test_nan_loss_stops_training_naming_the_iteration(tmp_path):
    with pytest.raises(
            FloatingPointError,
            match=r'loss is nan at iteration 1 \(epoch 1\)'):
        _runner(tmp_path, nan=True).train()
    # checked before the checkpoint hook of the same iteration
    assert not list(tmp_path.glob('iter_*.pth'))


def _all_finite(path):
    state = torch.load(path, weights_only=True)['state_dict']
    return all(
        bool(torch.isfinite(v).all()) for v in state.values()
        if v.is_floating_point())


def test_no_checkpoint_with_nonfinite_weights_is_written(tmp_path):
    """A diverging lr, iteration checkpoints and a rare loss check (as in the
    ImageNet configs): the weights are checked before each save."""
    with pytest.raises(
            FloatingPointError,
            match=r'not saving the checkpoint of iteration \d+'):
        _runner(tmp_path, lr=1e6, loss_interval=50).train()
    saved = sorted(tmp_path.glob('iter_*.pth'))
    assert all(_all_finite(p) for p in saved)
    last = tmp_path / 'last_checkpoint'
    if last.exists():
        assert _all_finite(last.read_text().strip())


def test_resuming_nonfinite_weights_is_refused_and_files_kept(tmp_path):
    _runner(tmp_path, lr=1e-3, loss_interval=1, max_epochs=1).train()
    path = (tmp_path / 'last_checkpoint').read_text().strip()
    ckpt = torch.load(path, weights_only=True)
    ckpt['state_dict']['backbone.cls_token'][:] = float('nan')
    torch.save(ckpt, path)
    before = hashlib.sha256(open(path, 'rb').read()).hexdigest()
    with pytest.raises(
            FloatingPointError, match='refusing a checkpoint with non-finite'):
        _runner(tmp_path, lr=1e-3, loss_interval=1, resume=True).train()
    assert hashlib.sha256(open(path, 'rb').read()).hexdigest() == before
