import os

import pytest
import torch
from mmengine.hooks import Hook
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from tests.helpers import TwoViewSamples, tiny_siameseim_cfg


class _RecordFirstStep(Hook):
    """The model's weights just before the first training step."""

    def __init__(self):
        self.before_step_1 = None

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if self.before_step_1 is None:
            self.before_step_1 = {
                k: v.detach().clone()
                for k, v in runner.model.state_dict().items()
            }


def _runner(work_dir, iters, resume=False, hooks=()):
    return Runner(
        model=tiny_siameseim_cfg(),
        work_dir=str(work_dir),
        train_dataloader=dict(
            dataset=TwoViewSamples(),
            sampler=dict(type='DefaultSampler', shuffle=False),
            batch_size=4,
            collate_fn=dict(type='default_collate')),
        train_cfg=dict(by_epoch=False, max_iters=iters),
        optim_wrapper=dict(optimizer=dict(type='AdamW', lr=1e-2)),
        custom_hooks=[dict(type='SaveInitialWeightsHook'), *hooks],
        default_hooks=dict(
            checkpoint=dict(type='CheckpointHook', interval=1,
                            by_epoch=False)),
        randomness=dict(seed=0),
        resume=resume,
        default_scope='mmpretrain')


def test_saves_the_weights_the_first_step_starts_from(tmp_path):
    record = _RecordFirstStep()
    runner = _runner(tmp_path, 2, hooks=[record])
    runner.train()
    saved = torch.load(
        tmp_path / 'initial_weights.pth', weights_only=True)['state_dict']
    after = runner.model.state_dict()
    assert set(saved) == set(record.before_step_1)
    for key, value in record.before_step_1.items():
        assert torch.equal(saved[key], value), key
    # and training moved on from them
    assert not torch.equal(saved['backbone.layers.0.attn.qkv.weight'],
                           after['backbone.layers.0.attn.qkv.weight'])


def test_resume_keeps_the_first_start_and_refuses_without_it(tmp_path):
    _runner(tmp_path, 2).train()
    path = tmp_path / 'initial_weights.pth'
    first = torch.load(path, weights_only=True)['state_dict']
    _runner(tmp_path, 3, resume=True).train()
    again = torch.load(path, weights_only=True)['state_dict']
    assert all(torch.equal(first[k], again[k]) for k in first)

    os.remove(path)
    with pytest.raises(FileNotFoundError, match='cannot be recovered'):
        _runner(tmp_path, 4, resume=True).train()
