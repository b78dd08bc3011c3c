"""`projects/demo/tools/demo.py --compare` runs any config of the mix catalogue
(or
any pretraining config path) under the demo's budget and evaluation."""
import glob
import os

import pytest
from mmengine.config import Config

from mmsiameseim.evaluation import probe_config
from projects.demo import cli
from tests.helpers import load_tool

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MIX = sorted(
    os.path.basename(p)[:-3] for p in glob.glob(
        os.path.join(ROOT, 'configs', 'pretrain', 'mix', '*.py')))


@pytest.fixture
def demo():
    return load_tool('projects/demo/tools/demo.py')


@pytest.fixture
def demo_cfg(demo):
    return demo.load_demo_config(demo.parse_args([]))


def test_names_mix_names_and_paths_resolve(demo, demo_cfg):
    assert cli.pretrain_config_path('mae', demo_cfg) == \
        demo_cfg.pretrain_configs['mae']
    for name in MIX:
        path = cli.pretrain_config_path(name, demo_cfg)
        assert path == f'configs/pretrain/mix/{name}.py'
        assert cli.method_name(name) == name
    path = os.path.join(ROOT, 'configs', 'pretrain', 'mix', MIX[0] + '.py')
    assert cli.pretrain_config_path(path, demo_cfg) == path
    assert cli.method_name(path) == MIX[0]
    assert cli.pretrain_config_path('nope', demo_cfg) is None


def test_unknown_method_lists_the_mix_catalogue(demo, tmp_path, monkeypatch):
    args = demo.parse_args(['--work-dir', str(tmp_path), '--compare', 'nope'])
    monkeypatch.setattr(demo, 'check_dataset', lambda root: None)
    with pytest.raises(SystemExit) as err:
        demo.run(args)
    assert "unknown method 'nope'" in str(err.value)
    assert MIX[0] in str(err.value)


@pytest.mark.parametrize('method',
                         ['siameseim', 'mae', 'mocov3', 'siameseim-target16'])
def test_demo_methods_keep_the_probe_unchanged(demo_cfg, method):
    probe = os.path.join(ROOT, demo_cfg.evaluation.probe_config)
    pretrain = Config.fromfile(
        os.path.join(ROOT, demo_cfg.pretrain_configs[method]))
    assert probe_config(probe, pretrain.model).model == \
        probe_config(probe).model


@pytest.mark.parametrize('name', MIX)
def test_every_mix_config_gets_the_demo_budget_and_a_probe(
        demo, demo_cfg, tmp_path, name):
    args = demo.parse_args(['--work-dir', str(tmp_path), '--compare', name])
    path = demo.methods_of(args, demo_cfg)[name]
    cfg = demo.pretrain_run_cfg(demo_cfg, path, str(tmp_path / name), args)
    assert cfg.work_dir == str(tmp_path / name)
    budget = Config.fromfile(
        os.path.join(ROOT, 'configs', 'pretrain', '_base_',
                     'fashionmnist_budget.py'))
    for key in ('train_cfg', 'param_scheduler'):
        assert cfg[key] == budget[key], key
    assert cfg.train_dataloader.batch_size == \
        budget.train_dataloader.batch_size
    assert cfg.optim_wrapper.optimizer == budget.optim_wrapper.optimizer
    probe = probe_config(
        os.path.join(ROOT, demo_cfg.evaluation.probe_config), cfg.model).model
    kind = cfg.model.backbone.type
    assert probe.backbone.type == ('SwinTransformer'
                                   if 'Swin' in kind else 'VisionTransformer')
    assert probe.backbone.init_cfg.type == 'Pretrained'
