"""What the demo prints: a short header per pretraining run, not the whole
config (which the run keeps in its work dir and log file)."""
import glob
import logging
import os.path as osp

import pytest
from mmengine.config import Config
from mmengine.logging import MMLogger

import mmsiameseim  # noqa: F401
from projects.demo import pretrain_once, quiet_console
from tests.helpers import ROOT

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
DATA = osp.join(ROOT, 'data', 'fashion_mnist')


@pytest.mark.skipif(
    not osp.exists(osp.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_pretraining_prints_a_header_and_keeps_the_config_off_the_console(
        tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(ROOT)  # the config's data_prefix is relative
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(tmp_path)
    with quiet_console():
        pretrain_once(cfg, save_initial_weights=False)
    out = capfd.readouterr().out
    # the header: config (and where the full one is), data, model, output
    name = osp.basename(TINY)
    assert f'config: {osp.relpath(TINY)} (in full: {tmp_path / name})' \
        in out
    assert '  data:   40 images of LocalFashionMNIST from ' \
        f'{osp.join(ROOT, "data", "fashion_mnist")}' in out
    assert '  model:  SiameseIM, ' in out and ' M parameters (backbone ' \
        in out
    assert f'  output: {tmp_path}' in out
    # the Runner's whole-config dump is not on the console ...
    assert 'Config:' not in out
    assert 'custom_hooks = [' not in out
    # ... but the run still logs (progress) and keeps the full config
    assert 'Epoch(train)' in out
    assert (tmp_path / name).read_text().count('custom_hooks = [') == 1
    log = glob.glob(str(tmp_path / '*' / '*.log'))
    assert log and 'Config:' in open(log[0]).read()


def test_only_loggers_made_inside_the_block_drop_the_dump(capsys):
    with quiet_console():
        inside = MMLogger.get_instance('i27_inside', logger_name='i27_in')
    outside = MMLogger.get_instance('i27_outside', logger_name='i27_out')
    for logger in (inside, outside):
        logger.info('Config:\nmodel = dict(type=1)')
        logger.info('Epoch(train) [1][1/5]')
    out = capsys.readouterr().out
    assert out.count('Config:') == 1  # the outside logger's
    assert out.count('Epoch(train)') == 2
    # the filter sits on the console handler only
    inside_filters = [
        type(f).__name__ for h in inside.handlers
        if type(h) is logging.StreamHandler for f in h.filters
    ]
    assert 'FileOnlyFilter' in inside_filters


def test_the_runner_details_go_to_the_log_file_only(tmp_path, capsys):
    """The environment dump, the hook table, the checkpoint folder, the
    paramwise and frozen-parameter lines stay off the console; progress,
    a warning that asks for action and the log file's copy stay."""
    log_file = str(tmp_path / 'run.log')
    with quiet_console():
        logger = MMLogger.get_instance(
            'i35_quiet', logger_name='i35', log_file=log_file)
    details = [
        '\n' + '-' * 60 + '\nSystem environment:\n    sys.platform: linux',
        'Hooks will be executed in the following order:\nbefore_run:',
        'Checkpoints will be saved to /tmp/x.',
        'paramwise_options -- backbone.ln1.bias:weight_decay=0.0',
    ]
    for text in details:
        logger.info(text)
    logger.warning('target.module.backbone.ln1.weight is skipped since its '
                   'requires_grad=False')
    logger.warning('"FileClient" will be deprecated in future.')
    logger.info('Epoch(train) [1][50/938]  lr: 1e-3')
    logger.warning('the loss is not finite: stop and check the lr')
    out = capsys.readouterr().out
    assert out.count('\n') == 2, out
    assert 'Epoch(train) [1][50/938]' in out
    assert 'the loss is not finite' in out
    for handler in logger.handlers:
        handler.flush()
    text = open(log_file).read()
    for needle in ('System environment:', 'Hooks will be executed',
                   'Checkpoints will be saved', 'paramwise_options',
                   'requires_grad=False', 'FileClient'):
        assert needle in text
