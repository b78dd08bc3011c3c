import pytest
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from tests.helpers import TwoViewSamples, tiny_siameseim_cfg


def test_nan_loss_stops_training_naming_the_iteration(tmp_path):
    runner = Runner(
        model=tiny_siameseim_cfg(),
        work_dir=str(tmp_path),
        train_dataloader=dict(
            dataset=TwoViewSamples(nan=True),
            sampler=dict(type='DefaultSampler', shuffle=False),
            batch_size=4,
            collate_fn=dict(type='default_collate')),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type='AdamW', lr=1e-3)),
        custom_hooks=[dict(type='StopOnNonFiniteLossHook')],
        default_scope='mmpretrain')
    with pytest.raises(FloatingPointError,
                       match=r'loss is nan at iteration 1 \(epoch 1\)'):
        runner.train()
