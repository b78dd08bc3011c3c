"""OnlineLinearProbeHook in a real mmengine Runner: the Fashion-MNIST
pretraining config, shrunk to a few iterations on a few images."""
import json
import os
import socket
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from mmengine.config import Config
from mmengine.dataset import DefaultSampler, default_collate
from mmengine.hooks import Hook
from mmengine.logging import MessageHub
from mmengine.runner import Runner
from torch.utils.data import DataLoader

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.hooks import OnlineLinearProbeHook
from mmsiameseim.evaluation import batch_features, set_training_precision
from tests.test_engine.test_online_knn_hook_dist import _dataset, _Model

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-p4_'
    '1xb64-bf16-coslr-1e_fashionmnist.py')
DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
needs_data = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _loader(test_mode, indices, shuffle=False, flip=False):
    pipeline = [dict(type='Pad', size=(32, 32), pad_val=0)]
    if flip:  # draws from numpy's global random state
        pipeline.append(dict(type='RandomFlip', prob=0.5))
    return dict(
        batch_size=16,
        num_workers=0,
        sampler=dict(type='DefaultSampler', shuffle=shuffle),
        collate_fn=dict(type='default_collate'),
        dataset=dict(
            type='LocalFashionMNIST',
            data_prefix=DATA,
            test_mode=test_mode,
            indices=indices,
            pipeline=pipeline + [dict(type='PackInputs')]))


def _runner(work_dir, probe=True, epochs=1, resume=False, **hook):
    """4 iterations of 8 images per epoch, without the config's kNN hook;
    with the online linear probe (``hook`` updates it) when ``probe``."""
    cfg = Config.fromfile(CONFIG)
    cfg.work_dir = str(work_dir)
    cfg.train_dataloader.dataset.indices = 32
    cfg.train_dataloader.batch_size = 8
    cfg.train_dataloader.num_workers = 0
    cfg.train_dataloader.persistent_workers = False
    cfg.train_cfg.max_epochs = epochs
    cfg.default_hooks.logger.interval = 1
    cfg.log_level = 'WARNING'
    cfg.resume = resume
    set_training_precision(cfg, 'float32')
    hooks = [h for h in cfg.custom_hooks if h.type != 'OnlineKNNHook']
    for h in hooks:
        if h.type == 'CheckpointHook':
            h.interval = 4
    if probe:
        probe_cfg = dict(
            type='OnlineLinearProbeHook',
            train_dataloader=_loader(False, 64, shuffle=True, flip=True),
            val_dataloader=_loader(True, 24),
            val_interval=2,
            before_train=True)
        hooks.append(dict(probe_cfg, **hook))
    cfg.custom_hooks = hooks
    return Runner.from_cfg(cfg)


def _hook(runner):
    return [h for h in runner.hooks if isinstance(h, OnlineLinearProbeHook)][0]


def _records(runner):
    path = os.path.join(runner.log_dir, 'vis_data', 'scalars.json')
    with open(path) as f:
        recs = [json.loads(line) for line in f]
    return [r for r in recs if 'linear/top1' in r]


@needs_data
def test_the_pretraining_weights_equal_a_run_without_it(tmp_path):
    """Same seed, same data: the model after 4 iterations is bit for bit
    the one of a run without the probe, although the probe shuffles,
    flips at random and initialises a classifier in between."""
    plain = _runner(tmp_path / 'plain', probe=False)
    plain.train()
    probed = _runner(tmp_path / 'probed')
    probed.train()
    a, b = plain.model.state_dict(), probed.model.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    assert probed.model.training
    # one classifier step per iteration; validated before, at 2 and at 4
    hook = _hook(probed)
    assert hook.steps == 4
    recs = _records(probed)
    assert [r['step'] for r in recs] == [0, 2, 4]
    assert [r['linear/steps'] for r in recs] == [0, 2, 4]
    for r in recs:
        assert r['linear/samples'] == 24
        assert 0 <= r['linear/top1'] <= r['linear/top5'] <= 100
    assert 'linear/train_loss' in recs[-1]
    assert probed.message_hub.get_scalar('train/linear_loss').current() > 0


@needs_data
def test_the_logged_accuracy_is_the_classifier_on_the_api_features(tmp_path):
    runner = _runner(tmp_path)
    runner.train()
    hook = _hook(runner)
    model = runner.model
    model.eval()
    with torch.no_grad():
        xs, ys = zip(*[
            batch_features(model, b, model.backbone)
            for b in hook.loaders['val']
        ])
        x, y = torch.cat(xs), torch.cat(ys)
        hook.classifier.eval()
        pred = hook.classifier(x).argmax(dim=1)
    top1 = 100. * (pred == y).float().mean().item()
    assert _records(runner)[-1]['linear/top1'] == pytest.approx(top1)


@needs_data
def test_the_probe_learns_on_frozen_features(tmp_path):
    """100 steps on the initial backbone's features lift held-out top-1
    to four times chance (10 %) or more."""
    runner = _runner(tmp_path, lr=0.05)
    runner.train()  # 4 iterations, 4 steps
    hook = _hook(runner)
    hook.loaders['train'] = runner.build_dataloader(
        _loader(False, 2000, shuffle=True), seed=0)
    hook.loaders['val'] = runner.build_dataloader(_loader(True, 300), seed=0)
    hook.batches = None
    for _ in range(100):
        hook.train_step(runner)
    scalars = hook.validate(runner, step=104)
    assert scalars['linear/steps'] == 104
    assert scalars['linear/top1'] > 40


class _Killed(RuntimeError):
    pass


class _KillAt(Hook):
    """Stops the run after ``iteration`` iterations, like a kill."""

    def __init__(self, iteration):
        self.iteration = iteration

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        if runner.iter + 1 == self.iteration:
            raise _Killed(f'killed after iteration {self.iteration}')


@needs_data
def test_a_resumed_run_goes_on_with_the_saved_classifier(tmp_path):
    first = _runner(tmp_path, epochs=2)
    first.register_hook(_KillAt(6), priority='LOWEST')
    with pytest.raises(_Killed):
        first.train()
    # the checkpoint after 4 iterations holds the classifier, readable by
    # the safe loader
    ckpt = torch.load(
        os.path.join(str(tmp_path), 'iter_4.pth'), weights_only=True)
    state = ckpt['online_linear_probe']['linear']
    assert state['steps'] == 4
    assert set(state['classifier']) == {
        '0.running_mean', '0.running_var', '0.num_batches_tracked', '1.weight',
        '1.bias'
    }
    resumed = _runner(tmp_path, epochs=2, resume=True)
    hook = _hook(resumed)
    resumed.train()
    assert resumed.iter == 8
    assert hook.steps == 8  # 4 saved + 4 new, not 2 + 4 from a new one
    recs = _records(resumed)
    # validated at the resume (before_train), with the saved classifier
    assert (recs[0]['step'], recs[0]['linear/steps']) == (4, 4)
    assert [r['step'] for r in recs] == [4, 6, 8]


@needs_data
def test_num_classes_comes_from_the_dataset_and_labels_are_checked(tmp_path):
    runner = _runner(tmp_path, before_train=False)
    hook = _hook(runner)
    hook.before_train(runner)
    assert hook.num_classes == 10
    runner = _runner(tmp_path / 'three', num_classes=3, before_train=False)
    with pytest.raises(ValueError) as e:
        runner.train()
    assert 'OnlineLinearProbeHook: label' in str(e.value)
    assert 'outside [0, 3) (num_classes=3)' in str(e.value)


@needs_data
def test_an_empty_set_is_refused_before_the_first_iteration(tmp_path):
    runner = _runner(tmp_path, before_train=False)
    hook = _hook(runner)
    hook.loader_cfgs['val']['dataset']['indices'] = 0
    with pytest.raises(ValueError) as e:
        runner.train()
    assert 'OnlineLinearProbeHook: val_dataloader has no samples' in \
        str(e.value)
    assert runner.iter == 0


def test_bad_options_are_refused():
    for option in ('num_classes', 'train_interval', 'val_interval',
                   'max_val_samples'):
        with pytest.raises(ValueError, match=f'{option}=0 must be >= 1'):
            OnlineLinearProbeHook({}, {}, **{option: 0})
    with pytest.raises(ValueError, match='lr=0 must be > 0'):
        OnlineLinearProbeHook({}, {}, lr=0)
    with pytest.raises(ValueError, match='OnlineLinearProbeHook: encoder'):
        OnlineLinearProbeHook({}, {}, encoder='ema')
    with pytest.raises(ValueError, match='OnlineLinearProbeHook precision'):
        OnlineLinearProbeHook({}, {}, precision='fp32')


def _worker(rank, port, out):
    torch.distributed.init_process_group(
        'gloo', init_method=f'tcp://127.0.0.1:{port}', rank=rank, world_size=2)
    torch.manual_seed(rank)  # different classifier initialisations too
    data = _dataset(12)
    hook = OnlineLinearProbeHook({}, {}, num_classes=2)
    hook.loaders = dict(
        train=DataLoader(
            data,
            batch_size=3,
            collate_fn=default_collate,
            sampler=DefaultSampler(data, shuffle=True)))
    runner = SimpleNamespace(
        model=_Model(), message_hub=MessageHub.get_instance(f'r{rank}'))
    for _ in range(3):
        hook.train_step(runner)
    # numpy, not tensors: a tensor travels as a shared-memory handle that
    # the parent cannot open once this process has exited
    out.put((rank, {
        k: v.numpy()
        for k, v in hook.classifier.state_dict().items()
    }))
    torch.distributed.destroy_process_group()


def test_two_ranks_hold_the_same_classifier():
    """Each rank starts from rank 0's initialisation and steps on its own
    batches, with averaged gradients and BatchNorm statistics: after 3
    steps both classifiers are equal."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    ctx = mp.get_context('spawn')
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(r, port, out)) for r in range(2)
    ]
    for p in procs:
        p.start()
    states = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for key in states[0]:
        assert np.allclose(states[0][key], states[1][key]), key
