"""A config's data location is one setting, its ``data_root``: every
dataloader, hook and evaluator follows it (``set_data_root``, and
``--cfg-options data_root=DIR`` through the plugin's tools)."""
import json
import os

import pytest
from mmengine.config import Config

from mmsiameseim.datasets import set_data_root
from tests.helpers import ROOT, load_tool

FMNIST_PRETRAIN = 'configs/pretrain/' \
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'
LVIS = ('configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-'
        'siameseim-pre_1xb4-300it_miniature-lvis-v1-128.py')
FMNIST_PROBE = 'configs/benchmarks/mmpretrain/' \
    'vit-tiny-p4_linear-probe-10e_fashionmnist.py'
FOLDER_PROBE = 'configs/benchmarks/mmpretrain/' \
    'vit-base-p16_siameseim-pre_8xb128-linear-coslr-90e_folder.py'


def _strings(cfg: Config) -> set:
    found = set()

    def walk(value):
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            found.add(value)

    walk(cfg.to_dict())
    return found


@pytest.mark.parametrize('config, moved', [
    (FMNIST_PRETRAIN, {'/mine/'}),
    (FMNIST_PROBE, {'/mine/'}),
    (LVIS, {'/mine/', '/mine/annotations/lvis_v1_val.json'}),
])
def test_every_path_under_the_data_root_moves(config, moved):
    cfg = Config.fromfile(os.path.join(ROOT, config))
    old = os.path.normpath(cfg.data_root)
    count = set_data_root(cfg, '/mine/')
    strings = _strings(cfg)
    assert {s for s in strings if s.startswith('/mine')} == moved
    assert count >= 3  # train, and the kNN hook's or val/test sets
    assert not [s for s in strings if os.path.normpath(s).startswith(old)]
    assert cfg.data_root == '/mine/'
    # the kNN hook of the pretraining config reads it too
    for hook in cfg.get('custom_hooks', []):
        for loader in ('bank_dataloader', 'query_dataloader'):
            if loader in hook:
                assert hook[loader]['dataset']['data_prefix'] == '/mine/'


def test_a_config_without_a_data_root_is_named():
    cfg = Config(dict(train_dataloader=dict(dataset=dict(data_root='x'))))
    with pytest.raises(KeyError, match='the config has no data path under'):
        set_data_root(cfg, '/mine')


def test_the_own_folder_configs_take_their_one_root():
    """A dataset whose root is to be given (None) takes the data root."""
    cfg = Config.fromfile(os.path.join(ROOT, FOLDER_PROBE))
    assert set_data_root(cfg, '/mine') >= 2
    assert cfg.train_dataloader.dataset.data_root == '/mine'
    assert cfg.val_dataloader.dataset.data_root == '/mine'


def test_the_tools_take_data_root_from_the_cfg_options(tmp_path, capsys):
    train = load_tool('train.py')
    config = os.path.join(ROOT, FMNIST_PRETRAIN)
    argv = train.data_root_moved([
        config, '--work-dir', 'w', '--cfg-options', 'data_root=/mine/',
        'train_cfg.max_epochs=2', '--resume'
    ])
    assert os.path.basename(argv[0]) == os.path.basename(config)
    assert argv[1:] == [
        '--work-dir', 'w', '--cfg-options', 'train_cfg.max_epochs=2',
        '--resume'
    ]
    cfg = Config.fromfile(argv[0])
    assert cfg.train_dataloader.dataset.data_prefix == '/mine/'
    # data_root itself, the training set and the kNN hook's two sets
    assert json.dumps(cfg.to_dict()).count('/mine/') == 4
    assert 'data_root=/mine/: 3 path(s)' in capsys.readouterr().out
    # only the data root given: the option goes whole
    argv = train.data_root_moved([config, '--cfg-options', 'data_root=/d'])
    assert argv[1:] == []
    # nothing to move: argv as it was
    assert train.data_root_moved([config, '--cfg-options', 'a=1']) == \
        [config, '--cfg-options', 'a=1']
