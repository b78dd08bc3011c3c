"""4 iterations straight == 2 + resume + 2 (online, target, momentum)."""
import pytest
import torch
from mmengine.hooks import Hook
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from tests.helpers import TwoViewSamples, tiny_siameseim_cfg


class _Crash(Exception):
    pass


class _CrashAfterFirstEpoch(Hook):
    """Stops the run like a crash, after the epoch-1 checkpoint is saved."""
    priority = 'LOWEST'

    def after_train_epoch(self, runner):
        raise _Crash


def _run(work_dir, resume, crash=False):
    runner = Runner(
        model=tiny_siameseim_cfg(),
        work_dir=str(work_dir),
        train_dataloader=dict(
            dataset=TwoViewSamples(),
            sampler=dict(type='DefaultSampler', shuffle=True),
            batch_size=4,
            collate_fn=dict(type='default_collate')),
        train_cfg=dict(by_epoch=True, max_epochs=2),
        custom_hooks=[_CrashAfterFirstEpoch()] if crash else [],
        optim_wrapper=dict(optimizer=dict(type='AdamW', lr=1e-3)),
        param_scheduler=[
            dict(type='CosineAnnealingLR', T_max=2, by_epoch=True)
        ],
        default_hooks=dict(
            checkpoint=dict(type='CheckpointHook', interval=1),
            logger=dict(type='LoggerHook', interval=1)),
        randomness=dict(seed=0),
        resume=resume,
        default_scope='mmpretrain')
    runner.train()
    return runner


def test_resume_is_exact(tmp_path):
    straight = _run(tmp_path / 'straight', resume=False)
    with pytest.raises(_Crash):
        _run(tmp_path / 'resumed', resume=False, crash=True)
    resumed = _run(tmp_path / 'resumed', resume=True)
    assert straight.iter == resumed.iter == 4
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(
            a[key], b[key], rtol=0, atol=0, msg=f'{key} differs after resume')
    assert any(k.startswith('target.module.') for k in a)
    assert straight.model.target.current_momentum() == \
        resumed.model.target.current_momentum()
