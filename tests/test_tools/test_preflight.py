"""Preflight (tools/analysis_tools/preflight.py and projects.preflight)
of every shipped config at its real size, quick ones here, heavy ones in the
slow tier; and the checks themselves (they must catch what they are for)."""
import glob
import json
import os

import pytest
import torch
from torch import nn

from projects.preflight import (PreflightError, config_groups, excluded_reason,
                                format_report, preflight, shipped_configs)
from projects.preflight.checks import check_param_groups, layer_decay_problems
from projects.preflight.data import (IMAGE_FOLDER, LABELLED_FOLDER,
                                     data_folders, fill_image_folder,
                                     point_data_root)
from projects.preflight.hook import PreflightHook
from projects.preflight.run import default_batch, input_size
from projects.preflight.schedule import devices_from_name, project
from tests.helpers import ROOT, load_tool

GROUPS = config_groups()
FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')


@pytest.fixture(scope='module')
def cache_dir(tmp_path_factory):
    """Miniature data shared by the preflights of this module."""
    return str(tmp_path_factory.mktemp('preflight_data'))


def check_record(record, config):
    assert record['failures'] == []
    assert record['config'] == config
    assert record['params_total'] == sum(record['params'].values())
    assert 0 < record['params_trainable'] <= record['params_total']
    assert record['step_s'] > 0 and record['peak_memory_mb'] > 0
    assert record['flops_per_image'] > 0
    assert record['input_size'] and all(s > 0 for s in record['input_size'])
    if 'param_groups' in record:
        assert record['params_without_grad'] == []
        assert record['param_group_problems'] == []
        assert record['checkpoint_reloaded']
        assert len(record['step_times_s']) == record['iters']
        assert record['losses']
        model = record['memory_model']
        assert 'error' not in model, model
        # the model, checked at a batch it was not fitted on
        assert model['check']['error'] < 0.15, model['check']
        batches = record['max_batch_per_device']
        assert list(batches) == ['24GB', '40GB', '80GB']
        assert 0 < batches['24GB'] <= batches['40GB'] <= batches['80GB']
        if 'max_batch_per_device_checkpointed' in record:
            assert record['max_batch_per_device_checkpointed']['24GB'] >= \
                batches['24GB']


# ------------------------------------------------------------ discovery
def test_every_config_file_is_preflighted_or_excluded_with_a_reason():
    found = sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(
            os.path.join(ROOT, 'configs', '**', '*.py'), recursive=True))
    shipped = shipped_configs()
    for path in found:
        assert (path
                in shipped) != bool(excluded_reason(os.path.join(ROOT,
                                                                 path))), path
    assert sorted(GROUPS['quick'] + GROUPS['heavy']) == shipped
    # the benchmark and pretraining configs the issue names are all there
    for part in ('siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k',
                 'siameseim_vit-large-p16', 'siameseim-target112', 'table3a',
                 'table3j', 'mix/', '8xb128-coslr-100e_in1k',
                 'linear-coslr-90e', '1percent-logreg', 'imagenet-c',
                 'imagenet-sketch', 'lsj-100e_coco', 'lsj-100e_lvis-v1',
                 'upernet_vit-base'):
        assert any(part in c for c in GROUPS['heavy']), part
    assert all('fashionmnist' in c for c in GROUPS['quick'])


# ---------------------------------------------------------------- checks
class TwoLayers(nn.Module):

    def __init__(self):
        super().__init__()
        self.used = nn.Linear(3, 3)
        self.norm = nn.LayerNorm(3)
        self.unused = nn.Linear(3, 3)


def test_hook_names_trainable_parameters_without_gradient():
    model = TwoLayers()
    runner = type('R', (), dict(model=model))()
    hook = PreflightHook(iters=1, count_flops=False)
    hook.before_train(runner)
    model.norm(model.used(torch.ones(2, 3))).sum().backward()
    hook.after_train(runner)
    missing = [n for n in hook.trainable if n not in hook.with_grad]
    assert missing == ['unused.weight', 'unused.bias']


class TinyEncoderModel(nn.Module):

    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(3, 3)
        self.head = nn.Linear(3, 3)


@pytest.mark.parametrize('fault, failing', [
    (None, None),
    ('zero', 'encoder parameters whose gradient is identically zero'),
    ('nan', 'got a non-finite gradient'),
    ('bias', None),
])
def test_gradient_check_has_teeth(fault, failing):
    """A gradient of zeros (the encoder cut off from the loss, as with no
    predictor block) or a non-finite one fails the preflight, naming the
    parameters; a head's zeros (a batch with no positives) do not, nor a
    bias whose gradient an invariance of the model makes zero (recorded)."""
    from projects.preflight.checks import gradient_problems
    model = TinyEncoderModel()
    runner = type('R', (), dict(model=model))()
    hook = PreflightHook(iters=2, count_flops=False)
    hook.before_train(runner)
    for step in range(2):
        features = model.backbone(torch.ones(2, 3))
        if fault == 'zero':
            features = features * 0
        elif fault == 'bias':  # a shift the model cancels
            features = features - model.backbone.bias
        elif fault == 'nan' and step == 1:
            features = features * float('nan')
        (model.head(features).sum() + 0 * model.head.weight.sum()).backward()
        model.zero_grad()
    hook.after_train(runner)
    record, failures = gradient_problems(hook)
    assert record['params_without_grad'] == []
    if failing is None:
        assert failures == []
        assert record['encoder_params_with_zero_grad'] == (
            ['backbone.bias'] if fault == 'bias' else [])
        return
    assert len(failures) == 1 and failing in failures[0]
    assert 'backbone.weight' in failures[0]
    if fault == 'zero':  # the head's own gradient still moves it
        assert record['encoder_params_with_zero_grad'] == [
            'backbone.weight', 'backbone.bias'
        ]
    else:
        assert 'backbone.weight' in record['params_with_nonfinite_grad']


def test_hook_reads_the_cuda_peak_before_the_logger_resets_it(monkeypatch):
    """mmengine's log processor resets CUDA's peak counter when it logs
    (``get_max_cuda_memory``), in LoggerHook's after_train_iter: the
    preflight hook runs before it and keeps the largest peak of the
    iterations (a GPU check once reported the same peak at every batch)."""
    from mmengine.hooks import LoggerHook
    from mmengine.runner import get_priority
    assert get_priority(PreflightHook.priority) < get_priority(
        LoggerHook.priority)  # lower value: runs first
    peaks = iter([3 * 2**30, 5 * 2**30])
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
    monkeypatch.setattr(torch.cuda, 'synchronize', lambda: None)
    monkeypatch.setattr(torch.cuda, 'max_memory_allocated',
                        lambda *a, **k: next(peaks))
    hook = PreflightHook(iters=5, count_flops=False)
    runner = type('R', (), dict(train_loop=None))()
    for i in range(2):
        hook.before_train_iter(runner, i)
        hook.after_train_iter(runner, i, outputs={})
    assert hook.peak_cuda_bytes == 5 * 2**30


def test_param_group_check_catches_decayed_norms_and_missing_params():
    model = TwoLayers()
    cfg = dict(
        optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.05),
        paramwise_cfg=dict(bias_decay_mult=0., flat_decay_mult=0.))
    # intended: 1-D parameters and biases without decay
    good = torch.optim.AdamW([
        dict(params=[model.used.weight, model.unused.weight]),
        dict(
            params=[
                model.used.bias, model.unused.bias, model.norm.weight,
                model.norm.bias
            ],
            weight_decay=0.)
    ],
                             lr=1e-3,
                             weight_decay=0.05)
    problems, summary = check_param_groups(model, good, cfg)
    assert problems == [] and summary['no_decay'] == 4
    # everything decayed, one weight left out of the optimizer
    bad = torch.optim.AdamW(
        [p for n, p in model.named_parameters() if n != 'unused.weight'],
        lr=1e-3,
        weight_decay=0.05)
    problems, _ = check_param_groups(model, bad, cfg)
    text = '\n'.join(problems)
    assert 'unused.weight is trainable but in no optimizer group' in text
    assert 'norm.weight: weight decay 0.05, expected 0' in text


def test_layer_decay_check_wants_monotone_scales_of_the_rate():
    rate, layers = 0.5, 2
    good = {d: {rate**(layers + 1 - d)} for d in range(layers + 2)}
    assert layer_decay_problems(good, rate, layers) == []
    bad = {**good, 1: {1.0}}  # block 0 at the heads' lr
    problems = layer_decay_problems(bad, rate, layers)
    assert any('not monotone' in p for p in problems)
    assert any('depth 1 lr scale' in p for p in problems)


def test_every_shipped_config_declares_its_input_size_and_batch():
    """Read from the configs as shipped (int or pair sizes), without building
    them: a config layout change must not break the heavy preflights, which
    only the slow tier runs."""
    from mmengine.config import Config
    for config in GROUPS['quick'] + GROUPS['heavy']:
        cfg = Config.fromfile(os.path.join(ROOT, config))
        size = input_size(cfg)
        assert size is not None and len(size) == 2, config
        assert all(isinstance(s, int) and s > 0 for s in size), config
        # two images (two a part for a SiameseIM in micro_batches parts)
        expected = 1 if '/mmdet/' in config else 2 * cfg.model.get(
            'micro_batches', 1)
        assert default_batch(cfg) == expected, config
    assert input_size(Config(dict(crop_size=224))) == [224, 224]
    assert input_size(Config(dict(crop_size=(512, 1024)))) == [512, 1024]


def test_own_images_configs_read_the_miniature_image_folder():
    """The _folder.py configs ship without a data_root (the user gives it);
    a preflight gives the pretraining ones the miniature ImageNet JPEGs, the
    labelled ones the miniature ImageNet's class folders, and leaves a given
    folder alone."""
    from mmengine.config import Config
    folder_configs = [c for c in GROUPS['heavy'] if c.endswith('_folder.py')]
    assert len(folder_configs) == 4
    for config in folder_configs:
        cfg = Config.fromfile(os.path.join(ROOT, config))
        note = fill_image_folder(cfg)
        labelled = cfg.train_dataloader.dataset.type == 'LabelledImageFolder'
        folder = LABELLED_FOLDER if labelled else IMAGE_FOLDER
        assert note and folder in note
        assert cfg.train_dataloader.dataset.data_root == folder
        if labelled:
            assert cfg.val_dataloader.dataset.data_root == folder
            assert 'val_dataloader.dataset.data_root unset' in note
        assert data_folders(cfg.to_dict()) == {'imagenet'}
        cfg.train_dataloader.dataset.data_root = '/my/images'
        if labelled:
            cfg.val_dataloader.dataset.data_root = '/my/images'
        assert fill_image_folder(cfg) is None
        assert cfg.train_dataloader.dataset.data_root == '/my/images'


def test_projection_of_an_epoch_schedule():
    schedule = dict(
        batch_per_device=256,
        devices=16,
        by_epoch=True,
        max_epochs=400,
        max_iters=None,
        drop_last=False)
    out = project(schedule, images_per_s=512., dataset_size=4096 * 10 + 1)
    assert out['iters_per_epoch'] == 11
    assert out['epoch_s'] == pytest.approx(11 * 0.5)
    assert out['total_s'] == pytest.approx(400 * 11 * 0.5)
    assert project(schedule, None, 10) is None
    assert devices_from_name('x_16xb256-amp_in1k.py') == 16


def test_data_paths_are_re_rooted():
    cfg = dict(
        a=dict(
            data_root='data/coco/',
            ann=['data/imagenet/meta/train.txt', 'other']))
    assert data_folders(cfg) == {'coco', 'imagenet'}
    out = point_data_root(cfg, '/x')
    assert out == dict(
        a=dict(
            data_root='/x/coco/', ann=['/x/imagenet/meta/train.txt', 'other']))


# ---------------------------------------------------- the command line
@pytest.mark.fault_matrix(
    'preflight', 'missing', 'exit status 1, the missing file named on stderr '
    'and in the JSON line')
def test_tool_fails_clearly_without_the_data(tmp_path, capsys):
    tool = load_tool('analysis_tools/preflight.py')
    config = 'configs/pretrain/siameseim_vit-tiny-p4_1xb64-fp32-coslr-1e_' \
             'fashionmnist.py'
    code = tool.main([
        os.path.join(ROOT, config), '--iters', '1', '--data-root',
        str(tmp_path / 'nothing')
    ])
    out, err = capsys.readouterr()
    assert code == 1
    record = json.loads(out.strip().splitlines()[-1])
    assert record['failures'] and 'preflight FAILED' in err
    assert str(tmp_path / 'nothing' / 'fashion_mnist') in err
    assert 'FAILED' in out  # the human-readable report says so too


def test_tool_refuses_bad_options():
    tool = load_tool('analysis_tools/preflight.py')
    with pytest.raises(SystemExit):
        tool.parse_args(['x.py', '--iters', '0'])
    with pytest.raises(SystemExit):
        tool.parse_args(['x.py', '--images-per-s', '-1'])


# ------------------------------------------- every config at its size
@pytest.mark.parametrize('config', GROUPS['quick'])
def test_quick_config_passes_preflight(config, cache_dir):
    record = preflight(
        os.path.join(ROOT, config),
        iters=2,
        fashion_mnist=FMNIST,
        cache_dir=cache_dir)
    check_record(record, os.path.join(ROOT, config))
    assert 'all checks passed' in format_report(record)


@pytest.mark.slow
@pytest.mark.parametrize('config', GROUPS['heavy'])
def test_heavy_config_passes_preflight_at_real_size(config, cache_dir):
    try:
        record = preflight(
            os.path.join(ROOT, config),
            iters=2,
            fashion_mnist=FMNIST,
            cache_dir=cache_dir)
    except PreflightError as error:
        pytest.fail(format_report(error.record))
    check_record(record, os.path.join(ROOT, config))


@pytest.mark.parametrize(
    'constructor,bias_decay',
    [
        ('LearningRateDecayOptimWrapperConstructor', 0.),
        ('ViTLayerDecayOptimWrapperConstructor', 0.05),  # ViTDet decays biases
        ('LayerDecayOptimizerConstructor', 0.),
    ])
def test_each_layer_decay_recipe_has_its_own_no_decay_set(
        constructor, bias_decay):
    from projects.preflight.checks import expected_decay
    paramwise = dict(no_decay_names=('pos_embed', ))
    assert expected_decay('neck.conv.bias', 1, False, 0.05, constructor,
                          paramwise) == bias_decay
    assert expected_decay('backbone.layers.0.ln1.weight', 1, True, 0.05,
                          constructor, paramwise) == 0.
    assert expected_decay('backbone.layers.0.attn.qkv.weight', 2, False, 0.05,
                          constructor, paramwise) == 0.05
