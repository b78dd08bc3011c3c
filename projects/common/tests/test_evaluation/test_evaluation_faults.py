"""The fault matrix of the studies' frozen-backbone protocol
(``projects.common.evaluation``) and the plugin's evaluation API under it
(``mmsiameseim.evaluation``): bad checkpoints, data, sample counts,
interrupted writes and results of other settings are refused early with the
file or option named, or give a correct result; the user's files are left
as they were."""
import json
import os
import os.path as osp
import re
import shutil
import socket

import numpy as np
import pytest
import torch
from mmengine.config import Config

import mmsiameseim  # noqa: F401
from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                    cached_features, file_identity,
                                    logistic_regression_accuracy, probe_config,
                                    weighted_knn_accuracy)
from projects.common.evaluation import FrozenBackboneProtocol
from projects.common.evaluation.stored_results import load_result, save_result
from tests.helpers import ROOT, logged
from tests.user_files import snapshot

PROBE = osp.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                 'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
DATA = osp.join(ROOT, 'data', 'fashion_mnist')
needs_data = pytest.mark.skipif(
    not osp.isfile(osp.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
# a few images of each set: every stage runs, in seconds
TINY = dict(
    knn=dict(k=20, temperature=0.07, train_samples=100),
    linear=dict(train_samples=100, epochs=1),
    fewshot=dict(fraction=0.0005, folds=2),
    test_samples=100)


def _protocol(work_dir, **overrides):
    settings = {**TINY, **overrides}
    return FrozenBackboneProtocol(PROBE, work_dir=str(work_dir), **settings)


def _probe_checkpoint(path, dims=128):
    """The probe's classifier (``dims`` wide) saved as mmengine saves it;
    returns its state dict."""
    from mmpretrain.registry import MODELS
    cfg = Config.fromfile(PROBE)
    model_cfg = cfg.model
    model_cfg.backbone.init_cfg = None
    model_cfg.backbone.arch.update(
        embed_dims=dims, feedforward_channels=dims * 4)
    model_cfg.neck.input_features = model_cfg.head.in_channels = dims
    model = MODELS.build(model_cfg)
    state = model.state_dict()
    torch.save({'meta': {}, 'state_dict': state}, path)
    return state


@pytest.fixture(scope='module')
def evaluated(tmp_path_factory):
    """A work dir of the protocol that evaluated the random init once."""
    work_dir = tmp_path_factory.mktemp('evaluated')
    result = _protocol(work_dir).evaluate('random_init', None)
    assert set(result) == {'knn', 'fewshot', 'fewshot_l2', 'linear'}
    return work_dir


def _no_network(monkeypatch):
    """Fail on any internet connection (the dataloader workers' local
    sockets go on)."""
    connect = socket.socket.connect

    def refuse(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f'the evaluation connected to {address}')
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, 'connect', refuse)


@needs_data
def test_the_api_runs_from_any_directory_without_downloading(
        tmp_path, monkeypatch):
    """Issue 24 item 8, the README's example run outside the repository.

    Before: the probe config's mmpretrain ``FashionMNIST`` with a relative
    data_root started a download and left an empty folder behind.
    """
    cwd = tmp_path / 'elsewhere'
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    _no_network(monkeypatch)
    result = _protocol(tmp_path / 'eval').evaluate('random_init', None)
    assert 0 <= result['knn'] <= 100 and 0 <= result['linear'] <= 100
    assert os.listdir(cwd) == []  # no data folder, nothing else


def test_every_dataset_of_a_probe_config_reads_local_files_only(tmp_path):
    cfg = tmp_path / 'probe.py'
    cfg.write_text(
        f'_base_ = {PROBE!r}\n'
        'train_dataloader = dict(dataset=dict(_delete_=True, '
        "type='FashionMNIST', data_prefix='data/fashion_mnist/'))\n"
        "val_dataloader = dict(dataset=dict(_delete_=True, type='CIFAR10', "
        "data_prefix='data/cifar10'))\n")
    out = probe_config(str(cfg))
    assert out.train_dataloader.dataset.type == 'LocalFashionMNIST'
    assert out.val_dataloader.dataset.download is False
    assert out.test_dataloader.dataset.type == 'LocalFashionMNIST'
    assert 'download' not in out.test_dataloader.dataset


@needs_data
@pytest.mark.fault_matrix(
    'evaluation', 'missing',
    'missing data: LocalFashionMNIST names the folder '
    'and the set-up step; never downloads, nothing '
    'written')
def test_missing_data_is_named_and_nothing_is_downloaded(
        tmp_path, monkeypatch):
    _no_network(monkeypatch)
    empty = tmp_path / 'no_data'
    empty.mkdir()
    protocol = _protocol(tmp_path / 'eval', data_prefix=str(empty))
    with pytest.raises(FileNotFoundError) as err:
        protocol.evaluate('random_init', None)
    assert f'Fashion-MNIST is not in {empty}/' in str(err.value)
    assert 'bash tools/setup_env.sh' in str(err.value)
    assert os.listdir(empty) == []
    assert os.listdir(tmp_path / 'eval' / 'results') == []


@needs_data
@pytest.mark.fault_matrix(
    'evaluation', 'missing', 'missing checkpoint or probe config: refused '
    'naming it, before any data is read')
def test_a_missing_checkpoint_or_config_is_named(tmp_path):
    protocol = _protocol(tmp_path / 'eval')
    absent = tmp_path / 'epoch_1.pth'
    with pytest.raises(
            FileNotFoundError, match=f'checkpoint {absent} not '
            'found'):
        protocol.evaluate('mine', str(absent))
    assert snapshot(tmp_path) == {}  # no file written
    with pytest.raises(
            FileNotFoundError, match="probe_config 'configs/x.py' not found"):
        FrozenBackboneProtocol('configs/x.py', str(tmp_path / 'eval2'), **TINY)
    assert not (tmp_path / 'eval2').exists()


@pytest.mark.parametrize('fault', [
    pytest.param(
        'empty',
        marks=pytest.mark.fault_matrix(
            'evaluation', 'empty',
            'refused: the checkpoint cannot be read as a '
            'PyTorch checkpoint, torch.load\'s error quoted')),
    pytest.param(
        'truncated',
        marks=pytest.mark.fault_matrix(
            'evaluation', 'truncated',
            'refused: the checkpoint cannot be read '
            'as a PyTorch checkpoint, torch.load\'s error quoted')),
    pytest.param(
        'text',
        marks=pytest.mark.fault_matrix(
            'evaluation', 'text', 'refused: not a PyTorch checkpoint, "it is '
            'text, starting ..."')),
])
def test_an_unreadable_checkpoint_is_named(tmp_path, fault):
    path = tmp_path / 'epoch_1.pth'
    if fault == 'empty':
        path.write_bytes(b'')
    elif fault == 'truncated':
        _probe_checkpoint(path)
        path.write_bytes(path.read_bytes()[:100_000])
    else:
        path.write_text('{"note": "weights are on the cluster"}\n')
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as err:
        build_frozen_backbone_model(Config.fromfile(PROBE), str(path))
    assert str(err.value).startswith(
        f'{path}: cannot be read as a PyTorch checkpoint (a file written by '
        'torch.save was expected; torch.load says')
    if fault == 'text':
        assert "it is text, starting '{\"note\"" in str(err.value)
    assert snapshot(tmp_path) == before


@needs_data
@pytest.mark.fault_matrix(
    'evaluation', 'nonfinite',
    'refused: the file and each NaN/inf tensor named '
    '(the strict Pretrained init); no result written')
def test_nonfinite_weights_are_refused_naming_file_and_tensors(tmp_path):
    """Issue 24 item 7.

    Before: loaded, and a kNN accuracy computed on NaN features was returned.
    """
    path = tmp_path / 'diverged.pth'
    state = _probe_checkpoint(path)
    state['backbone.layers.2.ffn.layers.1.weight'][0, 0] = float('nan')
    state['backbone.cls_token'][0, 0, :2] = float('inf')
    torch.save({'meta': {}, 'state_dict': state}, path)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as err:
        _protocol(tmp_path / 'eval').evaluate('diverged', str(path))
    message = str(err.value)
    assert message.startswith(f"{path} (prefix 'backbone.'): refusing "
                              'weights that are not finite: 2 of ')
    assert 'backbone.cls_token (0 NaN, 2 inf of 128 values)' in message
    assert 'backbone.layers.2.ffn.layers.1.weight (1 NaN, 0 inf of ' \
        in message
    assert snapshot(tmp_path) == before  # no subsets, no result


@pytest.mark.fault_matrix(
    'evaluation', 'nonfinite', 'kNN and few-shot on features holding NaN/inf '
    '(e.g. a precision overflow): refused, counted')
def test_nonfinite_features_are_refused():
    feats = torch.randn(6, 4)
    feats[2, 1] = float('nan')
    labels = torch.tensor([0, 1, 0, 1, 0, 1])
    with pytest.raises(
            ValueError,
            match='train_feats: 1 of 6 feature '
            'vectors hold NaN or inf'):
        weighted_knn_accuracy(feats, labels, torch.randn(2, 4),
                              torch.tensor([0, 1]))
    with pytest.raises(ValueError, match='test_feats: 1 of 6 feature'):
        logistic_regression_accuracy(torch.randn(6, 4), labels, feats, labels)


@pytest.mark.fault_matrix(
    'evaluation', 'architecture',
    'a backbone of another width: refused naming the '
    'file, the tensors and both shapes')
def test_a_checkpoint_of_another_width_is_refused(tmp_path):
    path = tmp_path / 'narrow.pth'
    _probe_checkpoint(path, dims=64)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as err:
        build_frozen_backbone_model(Config.fromfile(PROBE), str(path))
    message = str(err.value)
    assert message.startswith(f"{path} (prefix 'backbone.'): its tensors "
                              'do not fit VisionTransformer')
    assert 'copying a param with shape torch.Size([64, 1, 4, 4]) from ' \
        'checkpoint, the shape in current model is torch.Size([128, 1, ' \
        '4, 4])' in message
    assert snapshot(tmp_path) == before


@pytest.mark.fault_matrix(
    'evaluation', 'samples',
    'kNN: no sample on a side refused; fewer training '
    'samples than k: all of them vote, the k used is '
    'returned')
def test_knn_with_no_samples_is_refused_and_a_small_bank_clamps_k():
    bank, labels = torch.eye(3), torch.tensor([0, 1, 2])
    with pytest.raises(ValueError, match='train_feats: no samples'):
        weighted_knn_accuracy(bank[:0], labels[:0], bank, labels)
    with pytest.raises(ValueError, match='test_feats: no samples'):
        weighted_knn_accuracy(bank, labels, bank[:0], labels[:0])
    res = weighted_knn_accuracy(bank, labels, bank, labels, k=20)
    assert res == dict(top1=100.0, top5=100.0, k=3)


@pytest.mark.fault_matrix(
    'evaluation', 'samples', 'few-shot: one class, or a class with one '
    'labelled sample: refused naming the classes')
def test_fewshot_needs_two_classes_and_two_samples_of_each():
    x = torch.randn(7, 4)
    with pytest.raises(
            ValueError, match=r'classes \[2\] with a single '
            'one'):
        logistic_regression_accuracy(x, torch.tensor([0, 0, 1, 1, 2, 0, 1]), x,
                                     torch.zeros(7, dtype=torch.long))
    with pytest.raises(ValueError, match='labelled samples of 1 classes'):
        logistic_regression_accuracy(x, torch.zeros(7, dtype=torch.long), x,
                                     torch.zeros(7, dtype=torch.long))


@needs_data
@pytest.mark.fault_matrix(
    'evaluation', 'samples', 'FrozenBackboneProtocol: more samples than the '
    'data has, too few few-shot labels, or counts '
    '< 1: refused naming the option, before any '
    'feature')
@pytest.mark.parametrize('overrides, words', [
    (dict(knn=dict(k=20, temperature=0.07, train_samples=70000)),
     'knn.train_samples=70000, but the training set (LocalFashionMNIST in '),
    (dict(test_samples=10001), 'test_samples=10001, but the test set'),
    (dict(fewshot=dict(fraction=0.0001, folds=2)),
     'fewshot.fraction=0.0001 gives 1 labelled image of some class'),
])
def test_counts_the_data_cannot_give_are_refused_naming_the_option(
        tmp_path, overrides, words):
    protocol = _protocol(tmp_path / 'eval', **overrides)
    with pytest.raises(ValueError, match=re.escape(words)):
        protocol.evaluate('random_init', None)
    assert os.listdir(tmp_path / 'eval') == ['results']  # nothing written
    with pytest.raises(ValueError, match='linear.epochs=0, at least 1'):
        _protocol(tmp_path / 'eval', linear=dict(train_samples=9, epochs=0))


@pytest.mark.fault_matrix(
    'evaluation', 'mid_write',
    'feature cache: written under a temporary name; '
    'a kill mid-write leaves no cache file and the '
    'next call extracts again')
def test_a_kill_while_caching_features_leaves_no_cache_entry(
        tmp_path, monkeypatch):
    calls = []

    def extract():
        calls.append(1)
        return torch.randn(5, 3), torch.arange(5)

    real_savez = np.savez

    def killed(path, **arrays):
        real_savez(path, feats=arrays['feats'][:2])
        raise KeyboardInterrupt

    monkeypatch.setattr(np, 'savez', killed)
    with pytest.raises(KeyboardInterrupt):
        cached_features(str(tmp_path), 'train', dict(ckpt='a'), extract)
    monkeypatch.undo()
    # only the temporary file, which no later call reads
    assert [p.name.endswith('.tmp.npz') for p in tmp_path.iterdir()] == \
        [True]
    cached_features(str(tmp_path), 'train', dict(ckpt='a'), extract)
    assert len(calls) == 2


@pytest.mark.fault_matrix(
    'evaluation', 'truncated',
    'a damaged feature-cache file: a warning names it, '
    'the features are extracted again')
def test_a_damaged_cache_file_is_named_and_not_used(tmp_path):

    def extract():
        return torch.ones(4, 2), torch.arange(4)

    cached_features(str(tmp_path), 'test', dict(ckpt='a'), extract)
    [path] = list(tmp_path.iterdir())
    path.write_bytes(path.read_bytes()[:50])
    with logged() as log:
        feats, _ = cached_features(
            str(tmp_path), 'test', dict(ckpt='a'), extract)
    assert torch.equal(feats, torch.ones(4, 2))
    out = log.getvalue()
    assert f'feature cache {path} cannot be read (' in out
    assert 'not using it; extracting the features again' in out


def _copy(evaluated, tmp_path):
    work_dir = tmp_path / 'eval'
    shutil.copytree(evaluated, work_dir)
    return work_dir


@needs_data
@pytest.mark.fault_matrix(
    'evaluation', 'mid_write',
    'results JSON: written under a temporary name; a '
    'kill mid-write keeps the earlier file as it was')
def test_a_kill_while_writing_results_keeps_the_earlier_file(
        evaluated, tmp_path, monkeypatch):
    work_dir = _copy(evaluated, tmp_path)
    path = work_dir / 'results' / 'random_init.json'
    # as a run interrupted after the kNN and few-shot results left it
    stored = json.loads(path.read_text())
    del stored['result']['linear']
    path.write_text(json.dumps(stored))
    before = snapshot(path)
    real_replace = os.replace

    def killed(src, dst):
        if str(dst) == str(path):  # after the temporary file, before rename
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, 'replace', killed)
    with pytest.raises(KeyboardInterrupt):
        _protocol(work_dir).evaluate('random_init', None)
    monkeypatch.undo()
    assert snapshot(path) == before


def test_a_result_is_reused_only_under_its_settings(tmp_path):
    ckpt = tmp_path / 'epoch_1.pth'
    ckpt.write_bytes(b'weights')
    path = str(tmp_path / 'r.json')
    settings = dict(knn=dict(k=20), checkpoint=file_identity(str(ckpt)))
    save_result(path, settings, dict(knn=70.5))
    assert load_result(path, json.loads(json.dumps(settings))) == \
        dict(knn=70.5)
    # the checkpoint rewritten (a new run into the same path)
    os.utime(ckpt, ns=(1, 1))
    with pytest.raises(
            ValueError,
            match=r'r.json was computed with other '
            r'settings: checkpoint.mtime_ns: \d+ there, 1 now'):
        load_result(path, dict(settings, checkpoint=file_identity(str(ckpt))))
    # a file of an earlier version, and a damaged one
    (tmp_path / 'old.json').write_text('{"knn": 70.5}')
    with pytest.raises(
            ValueError, match='old.json holds no record of its '
            'settings'):
        load_result(str(tmp_path / 'old.json'), settings)
    (tmp_path / 'cut.json').write_text('{"settings": {"knn"')
    with pytest.raises(ValueError, match='cut.json: not a results file'):
        load_result(str(tmp_path / 'cut.json'), settings)


@needs_data
@pytest.mark.fault_matrix(
    'evaluation', 'changed_run',
    'results or subsets of other settings (options, '
    'checkpoint file, config): refused naming the '
    'file and each difference; files untouched')
@pytest.mark.parametrize('overrides, name, file, words', [
    (dict(knn=dict(k=10, temperature=0.07, train_samples=100)), 'random_init',
     'results/random_init.json', 'knn.k: 20 there, 10 now'),
    (dict(precision='bfloat16'), 'random_init', 'results/random_init.json',
     'precision: float32 there, bfloat16 now'),
    (dict(linear=dict(train_samples=200, epochs=1)), 'another', 'subsets.npz',
     'linear_train_samples: 100 there, 200 now'),
])
def test_results_of_other_settings_are_not_reused(evaluated, tmp_path,
                                                  overrides, name, file,
                                                  words):
    work_dir = _copy(evaluated, tmp_path)
    before = snapshot(work_dir)
    with pytest.raises(ValueError) as err:
        _protocol(work_dir, **overrides).evaluate(name, None)
    message = str(err.value)
    assert message.startswith(f'{work_dir / file} was computed with other '
                              'settings: ')
    assert words in message
    assert message.endswith('Not reusing it: evaluate into another '
                            'work_dir, or delete the file to compute it '
                            'again with these settings.')
    assert snapshot(work_dir) == before
