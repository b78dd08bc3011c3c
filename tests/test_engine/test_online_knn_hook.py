"""OnlineKNNHook in a real mmengine Runner: the Fashion-MNIST pretraining
config, shrunk to a few iterations on a few images."""
import json
import os

import pytest
import torch
from mmengine.config import Config
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.hooks import OnlineKNNHook
from mmsiameseim.evaluation import (batch_features, set_training_precision,
                                    weighted_knn_accuracy)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-p4_'
                      '1xb64-bf16-coslr-1e_fashionmnist.py')
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(ROOT, 'data', 'fashion_mnist',
                                    't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _runner(tmp_path, **hook):
    """4 iterations of 8 images; the config's kNN hook with ``hook``."""
    cfg = Config.fromfile(CONFIG)
    cfg.work_dir = str(tmp_path)
    cfg.train_dataloader.dataset.indices = 32
    cfg.train_dataloader.batch_size = 8
    cfg.train_dataloader.num_workers = 0
    cfg.train_dataloader.persistent_workers = False
    cfg.default_hooks.logger.interval = 1
    set_training_precision(cfg, 'float32')
    knn = [h for h in cfg.custom_hooks if h.type == 'OnlineKNNHook']
    assert len(knn) == 1, 'the config has one OnlineKNNHook'
    knn = knn[0]
    knn.bank_dataloader.dataset.indices = 48
    knn.query_dataloader.dataset.indices = 24
    knn.bank_dataloader.batch_size = knn.query_dataloader.batch_size = 16
    knn.update(hook)
    cfg.log_level = 'WARNING'
    return Runner.from_cfg(cfg)


def _knn_records(runner):
    path = os.path.join(runner.log_dir, 'vis_data', 'scalars.json')
    with open(path) as f:
        recs = [json.loads(line) for line in f]
    return [r for r in recs if 'knn/top1' in r]


def _hook(runner):
    return [h for h in runner.hooks if isinstance(h, OnlineKNNHook)][0]


def _api_knn(runner, hook, backbone):
    """The evaluation API on the same loaders and model."""
    model = runner.model
    model.eval()
    feats = {}
    for name in ('bank', 'query'):
        xs, ys = zip(*[batch_features(model, b, backbone, hook.precision)
                       for b in hook.loaders[name]])
        feats[name] = torch.cat(xs), torch.cat(ys)
    return weighted_knn_accuracy(*feats['bank'], *feats['query'], k=hook.k,
                                 temperature=hook.temperature)


def test_logs_top1_top5_every_interval_and_equals_the_api(tmp_path):
    runner = _runner(tmp_path, interval=2, before_train=True)
    runner.train()
    recs = _knn_records(runner)
    assert [r['step'] for r in recs] == [0, 2, 4]  # before, every 2 iters
    for r in recs:
        assert 0 <= r['knn/top5'] <= 100 and r['knn/top1'] <= r['knn/top5']
        assert (r['knn/bank'], r['knn/queries'], r['knn/capped']) == \
            (48, 24, 0)
    assert runner.message_hub.get_scalar('knn/top1').current() == \
        recs[-1]['knn/top1']
    # training went on in train mode after each round
    assert runner.model.training
    # the last round ran on the final weights: the API gives the same
    hook = _hook(runner)
    # the first complete pass was kept (cache_inputs) and encoded again
    assert [len(hook.cached_batches[n]) for n in ('bank', 'query')] == [3, 2]
    api = _api_knn(runner, hook, runner.model.backbone)
    assert api['top1'] == pytest.approx(recs[-1]['knn/top1'])
    assert api['top5'] == pytest.approx(recs[-1]['knn/top5'])


def test_by_epoch_interval_and_no_round_before_training(tmp_path):
    runner = _runner(tmp_path, interval=1, by_epoch=True,
                     before_train=False, max_samples=48)
    runner.train()
    recs = _knn_records(runner)
    assert [r['step'] for r in recs] == [4]
    # a cap the data does not reach is not a capped round
    assert (recs[0]['knn/bank'], recs[0]['knn/capped']) == (48, 0)


def test_target_encoder_is_the_momentum_backbone(tmp_path):
    runner = _runner(tmp_path, interval=4, encoder='target',
                     before_train=False)
    runner.train()
    rec = _knn_records(runner)[-1]
    hook = _hook(runner)
    target = runner.model.target.module['backbone']
    assert hook.backbone(runner.model) is target
    api = _api_knn(runner, hook, target)
    assert api['top1'] == pytest.approx(rec['knn/top1'])
    hook.target_backbone = 'momentum_encoder.module.0'
    with pytest.raises(AttributeError, match='target_backbone'):
        hook.backbone(runner.model)


def test_cap_on_samples_and_time_is_respected_and_logged(tmp_path):
    runner = _runner(tmp_path, interval=4, max_samples=20,
                     before_train=False)
    runner.train()
    rec = _knn_records(runner)[-1]
    # whole batches of 16 until 20 are reached, then cut to 20
    assert (rec['knn/bank'], rec['knn/queries'], rec['knn/capped']) == \
        (20, 20, 1)
    runner = _runner(tmp_path / 'time', interval=4, max_seconds=0,
                     before_train=False)
    runner.train()
    rec = _knn_records(runner)[-1]
    # past the deadline after the first batch of each set
    assert (rec['knn/bank'], rec['knn/queries'], rec['knn/capped']) == \
        (16, 16, 1)
    with open(os.path.join(runner.log_dir,
                           f'{runner.timestamp}.log')) as f:
        log = f.read()
    assert 'round at step 4 capped' in log
    assert 'used 16/48 bank and 16/24 query samples' in log
    assert _hook(runner).cached_batches == {}  # capped passes are not kept


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match='encoder'):
        OnlineKNNHook({}, {}, encoder='ema')
    with pytest.raises(ValueError, match="OnlineKNNHook precision='fp32': "
                       r"choose from \['float32', 'bfloat16', 'float16'\] "
                       r"\('fp32' is a tools' --precision flag; configs and "
                       "the Python API take 'float32'"):
        OnlineKNNHook({}, {}, precision='fp32')


def test_the_imagenet_configs_commented_example_builds(tmp_path):
    """Uncommented, the example of the ImageNet pretraining config gives
    the hook on the target encoder beside the runtime's hooks."""
    from mmpretrain.registry import HOOKS
    name = 'siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
    src = open(os.path.join(ROOT, 'configs', 'pretrain', name)).read()
    example = src[src.index('# knn_pipeline'):].splitlines()
    assert all(line.startswith('# ') or line == '#' for line in example)
    cfg = tmp_path / 'with_knn.py'
    base = os.path.join(ROOT, 'configs', 'pretrain', name)
    cfg.write_text(f'_base_ = {base!r}\n' +
                   '\n'.join(line[2:] for line in example))
    hooks = Config.fromfile(str(cfg)).custom_hooks
    runtime = Config.fromfile(os.path.join(
        ROOT, 'configs', 'pretrain', '_base_', 'runtime.py')).custom_hooks
    assert hooks[:len(runtime)] == runtime
    hook = HOOKS.build(hooks[-1])
    assert isinstance(hook, OnlineKNNHook) and hook.encoder == 'target'
