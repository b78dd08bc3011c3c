"""OnlineKNNHook in a real mmengine Runner: the Fashion-MNIST pretraining
config, shrunk to a few iterations on a few images."""
import json
import os
import uuid

import pytest
import torch
from mmengine.config import Config
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.hooks import OnlineKNNHook, OnlineLinearProbeHook
from mmsiameseim.evaluation import (batch_features, set_training_precision,
                                    weighted_knn_accuracy)
from tests.helpers import logged

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-p4_'
    '1xb64-bf16-coslr-1e_fashionmnist.py')
pytestmark = pytest.mark.skipif(
    not os.path.exists(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _runner(tmp_path, log_level='WARNING', **hook):
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
    cfg.log_level = log_level
    # mmengine names the logger and visualizer instances by the experiment,
    # by default the second the run starts: two runners of one second would
    # share one visualizer and write into the first one's log folder
    cfg.experiment_name = f'knn_hook_{uuid.uuid4().hex[:8]}'
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
        xs, ys = zip(*[
            batch_features(model, b, backbone, hook.precision)
            for b in hook.loaders[name]
        ])
        feats[name] = torch.cat(xs), torch.cat(ys)
    return weighted_knn_accuracy(
        *feats['bank'],
        *feats['query'],
        k=hook.k,
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
    runner = _runner(
        tmp_path,
        interval=1,
        by_epoch=True,
        before_train=False,
        max_samples=48)
    runner.train()
    recs = _knn_records(runner)
    assert [r['step'] for r in recs] == [4]
    # a cap the data does not reach is not a capped round
    assert (recs[0]['knn/bank'], recs[0]['knn/capped']) == (48, 0)


def test_target_encoder_is_the_momentum_backbone(tmp_path):
    runner = _runner(
        tmp_path, interval=4, encoder='target', before_train=False)
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
    runner = _runner(tmp_path, interval=4, max_samples=20, before_train=False)
    runner.train()
    rec = _knn_records(runner)[-1]
    # whole batches of 16 until 20 are reached, then cut to 20
    assert (rec['knn/bank'], rec['knn/queries'], rec['knn/capped']) == \
        (20, 20, 1)
    runner = _runner(
        tmp_path / 'time', interval=4, max_seconds=0, before_train=False)
    runner.train()
    rec = _knn_records(runner)[-1]
    # past the deadline after the first batch of each set
    assert (rec['knn/bank'], rec['knn/queries'], rec['knn/capped']) == \
        (16, 16, 1)
    with open(os.path.join(runner.log_dir, f'{runner.timestamp}.log')) as f:
        log = f.read()
    assert 'round at step 4 capped' in log
    assert 'used 16/48 bank and 16/24 query samples' in log
    assert _hook(runner).cached_batches == {}  # capped passes are not kept


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match='encoder'):
        OnlineKNNHook({}, {}, encoder='ema')
    with pytest.raises(
            ValueError,
            match="OnlineKNNHook precision='fp32': "
            r"choose from \['float32', 'bfloat16', 'float16'\] "
            r"\('fp32' is a tools' --precision flag; configs and "
            "the Python API take 'float32'"):
        OnlineKNNHook({}, {}, precision='fp32')
    with pytest.raises(ValueError, match='k=0 must be >= 1'):
        OnlineKNNHook({}, {}, k=0)
    with pytest.raises(ValueError, match='max_samples=0 must be >= 1'):
        OnlineKNNHook({}, {}, max_samples=0)
    with pytest.raises(ValueError, match='temperature=0 must be > 0'):
        OnlineKNNHook({}, {}, temperature=0)


def test_the_imagenet_configs_commented_example_builds(tmp_path):
    """Uncommented, the example of the ImageNet pretraining config gives
    the kNN hook and the online linear probe on the target encoder beside
    the runtime's hooks."""
    from mmpretrain.registry import HOOKS
    name = 'siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
    src = open(os.path.join(ROOT, 'configs', 'pretrain', name)).read()
    example = src[src.index('# knn_pipeline'):].splitlines()
    assert all(line.startswith('# ') or line == '#' for line in example)
    cfg = tmp_path / 'with_knn.py'
    base = os.path.join(ROOT, 'configs', 'pretrain', name)
    cfg.write_text(f'_base_ = {base!r}\n' + '\n'.join(line[2:]
                                                      for line in example))
    hooks = Config.fromfile(str(cfg)).custom_hooks
    runtime = Config.fromfile(
        os.path.join(ROOT, 'configs', 'pretrain', '_base_',
                     'runtime.py')).custom_hooks
    assert hooks[:len(runtime)] == runtime
    knn, probe = (HOOKS.build(h) for h in hooks[len(runtime):])
    assert isinstance(knn, OnlineKNNHook) and knn.encoder == 'target'
    assert isinstance(probe, OnlineLinearProbeHook)
    assert (probe.encoder, probe.num_classes, probe.train_interval) == \
        ('target', 1000, 10)


def _log(runner):
    with open(os.path.join(runner.log_dir, f'{runner.timestamp}.log')) as f:
        return f.read()


def _checkpoints(runner):
    return [f for f in os.listdir(runner.work_dir) if f.endswith('.pth')]


@pytest.mark.fault_matrix(
    'knn_hook', 'samples', 'an empty bank or query set: refused at start-up '
    '(before_train), naming the dataloader option; no '
    'iteration trained')
@pytest.mark.parametrize('empty', ['bank', 'query'])
def test_an_empty_set_is_refused_before_the_first_iteration(tmp_path, empty):
    """Issue 24 item 11.

    Before: training ran to the first round, which failed with
    'torch.cat(): expected a non-empty list of Tensors'.
    """
    runner = _runner(
        tmp_path,
        interval=4,
        before_train=False,
        **{f'{empty}_dataloader': dict(dataset=dict(indices=0))})
    with pytest.raises(ValueError) as err:
        runner.train()
    assert str(err.value).startswith(
        f'OnlineKNNHook: {empty}_dataloader has no samples '
        "(type='LocalFashionMNIST', data_prefix=")
    assert 'indices=0): every kNN round needs at least one bank and one ' \
        f'query sample; fix the dataset of {empty}_dataloader' in \
        str(err.value)
    assert runner.iter == 0 and _checkpoints(runner) == []


@pytest.mark.fault_matrix(
    'knn_hook', 'samples', 'a bank smaller than k: used, all of it voting; '
    'the start-up log and every round say the k used')
def test_a_bank_smaller_than_k_is_used_and_the_k_used_is_logged(tmp_path):
    """Issue 24 item 11.

    Before: the log said k=20 for a 12-sample bank.
    """
    runner = _runner(
        tmp_path,
        log_level='INFO',
        interval=4,
        before_train=False,
        k=20,
        bank_dataloader=dict(dataset=dict(indices=12)))
    runner.train()
    log = _log(runner)
    assert 'OnlineKNNHook: the bank has 12 samples, fewer than k=20: every ' \
        'round uses k=12 (all of them vote)' in log
    assert 'top-5' in log and '(k=12 of the k=20 asked: the bank has 12, ' \
        'T=0.07, 12/12 bank and 24/24 query samples' in log
    rec = _knn_records(runner)[-1]
    assert (rec['knn/k'], rec['knn/bank']) == (12, 12)
    hook = _hook(runner)
    api = _api_knn(runner, hook, runner.model.backbone)
    assert api['k'] == 12 and api['top1'] == pytest.approx(rec['knn/top1'])


@pytest.mark.parametrize('fault', [
    pytest.param(
        'missing',
        marks=pytest.mark.fault_matrix(
            'knn_hook', 'missing',
            'missing data of the bank or queries: named '
            'with the set-up step at start-up, before any iteration')),
    pytest.param(
        'truncated',
        marks=pytest.mark.fault_matrix(
            'knn_hook', 'truncated', 'a cut data file of the bank or queries: '
            'named with both sizes at start-up, before any iteration')),
])
def test_bad_bank_data_is_named_at_start_up(tmp_path, fault):
    """Before: named only at the first round, after training."""
    from tests.user_files import snapshot
    data = tmp_path / 'data'
    data.mkdir()
    if fault == 'truncated':
        real = os.path.join(ROOT, 'data', 'fashion_mnist')
        for name in os.listdir(real):
            os.symlink(os.path.join(real, name), data / name)
        (data / 'train-labels-idx1-ubyte').unlink()
        with open(os.path.join(real, 'train-labels-idx1-ubyte'), 'rb') as f:
            (data / 'train-labels-idx1-ubyte').write_bytes(f.read()[:1000])
    before = snapshot(data)
    runner = _runner(
        tmp_path / 'run',
        interval=4,
        before_train=False,
        bank_dataloader=dict(dataset=dict(data_prefix=str(data))))
    error, words = (FileNotFoundError, f'Fashion-MNIST is not in {data}') \
        if fault == 'missing' else (ValueError, '1,000 bytes, but its header '
                                    'describes 60000 unsigned byte values')
    with pytest.raises(error, match=words):
        runner.train()
    assert runner.iter == 0 and _checkpoints(runner) == []
    assert snapshot(data) == before


@pytest.mark.fault_matrix(
    'knn_hook', 'architecture',
    'a target_backbone the model lacks: refused at '
    'start-up naming the option and the model')
def test_a_wrong_target_backbone_is_refused_at_start_up(tmp_path):
    runner = _runner(
        tmp_path,
        interval=4,
        before_train=False,
        encoder='target',
        target_backbone='momentum_encoder.module.0')
    with pytest.raises(
            AttributeError,
            match="has no module 'momentum_"
            "encoder.module.0' \\(target_backbone\\)"):
        runner.train()
    assert runner.iter == 0


@pytest.mark.fault_matrix(
    'knn_hook', 'nonfinite',
    'features holding NaN/inf (diverged weights): the '
    'round is skipped with a warning, no number logged')
def test_a_round_on_nonfinite_features_is_skipped_with_a_warning(tmp_path):
    runner = _runner(tmp_path, interval=4)
    hook = _hook(runner)
    with torch.no_grad():
        runner.model.backbone.layers[0].attn.qkv.weight.fill_(float('nan'))
    with logged() as log:
        assert hook.evaluate(runner, step=0) is None
    assert 'OnlineKNNHook: no kNN at step 0: the bank and query features ' \
        f'hold NaN or inf (online encoder, precision {hook.precision})' in \
        log.getvalue()
    assert 'knn/top1' not in runner.message_hub.log_scalars


def test_two_knn_hooks_under_one_prefix_are_refused_before_training(tmp_path):
    """An online and a target kNN hook would both write knn/top1 at the
    same step: refused, naming both and a prefix to give; with their own
    prefixes both log."""
    from mmengine.registry import HOOKS
    runner = _runner(tmp_path / 'same', before_train=False, interval=2)
    knn = Config.fromfile(CONFIG).custom_hooks
    knn = next(h for h in knn if h.type == 'OnlineKNNHook')
    sets = dict(
        bank_dataloader=dict(
            knn.bank_dataloader,
            dataset=dict(knn.bank_dataloader.dataset, indices=48)),
        query_dataloader=dict(
            knn.query_dataloader,
            dataset=dict(knn.query_dataloader.dataset, indices=24)))
    target = HOOKS.build(dict(knn, encoder='target', interval=2, **sets))
    runner.register_hook(target)
    with pytest.raises(
            ValueError,
            match=r'both log as knn/\.\.\.: give one another '
            r"prefix, e.g. prefix='knn_target'"):
        runner.train()
    runner = _runner(tmp_path / 'own', before_train=False, interval=2)
    runner.register_hook(
        HOOKS.build(
            dict(
                knn, encoder='target', interval=2, prefix='knn_target',
                **sets)))
    runner.train()
    path = os.path.join(runner.log_dir, 'vis_data', 'scalars.json')
    with open(path) as f:
        text = f.read()
    assert '"knn/top1"' in text and '"knn_target/top1"' in text
