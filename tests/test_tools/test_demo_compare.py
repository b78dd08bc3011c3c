"""`tools/demo.py --compare` runs any config of the mix catalogue (or any
pretraining config path) under the demo's budget and evaluation."""
import glob
import os

import pytest
from mmengine.config import Config

from tests.helpers import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MIX = sorted(os.path.basename(p)[:-3] for p in glob.glob(
    os.path.join(ROOT, 'configs', 'pretrain', 'mix', '*.py')))


@pytest.fixture
def demo():
    return load_tool('demo.py')


def test_names_mix_names_and_paths_resolve(demo):
    assert demo.pretrain_config_path('mae') == demo.PRETRAIN_CFGS['mae']
    for name in MIX:
        path = demo.pretrain_config_path(name)
        assert path == f'configs/pretrain/mix/{name}.py'
        assert demo.method_name(name) == name
    path = os.path.join(ROOT, 'configs', 'pretrain', 'mix', MIX[0] + '.py')
    assert demo.pretrain_config_path(path) == path
    assert demo.method_name(path) == MIX[0]
    assert demo.pretrain_config_path('nope') is None


def test_unknown_method_lists_the_mix_catalogue(demo, tmp_path,
                                                monkeypatch):
    args = demo.parse_args(['--work-dir', str(tmp_path), '--compare',
                            'nope'])
    monkeypatch.setattr(demo, 'check_dataset', lambda root: None)
    with pytest.raises(SystemExit) as err:
        demo.Demo(args).run()
    assert "unknown method 'nope'" in str(err.value)
    assert MIX[0] in str(err.value)


@pytest.mark.parametrize('method', ['siameseim', 'mae', 'mocov3',
                                    'siameseim-target16'])
def test_demo_methods_keep_the_probe_unchanged(demo, tmp_path, method):
    d = demo.Demo(demo.parse_args(['--work-dir', str(tmp_path)]))
    assert d._probe_cfg(method).model == d._probe_cfg().model


@pytest.mark.parametrize('name', MIX)
def test_every_mix_config_gets_the_demo_budget_and_a_probe(demo, tmp_path,
                                                           name):
    args = demo.parse_args(['--work-dir', str(tmp_path), '--compare', name])
    d = demo.Demo(args)
    d.cfg_paths[name] = demo.pretrain_config_path(name)
    cfg = d.pretrain_run_cfg(name)
    assert cfg.work_dir == str(tmp_path / name)
    budget = Config.fromfile(os.path.join(
        ROOT, 'configs', 'pretrain', '_base_', 'fashionmnist_budget.py'))
    for key in ('train_cfg', 'param_scheduler'):
        assert cfg[key] == budget[key], key
    assert cfg.train_dataloader.batch_size == \
        budget.train_dataloader.batch_size
    assert cfg.optim_wrapper.optimizer == budget.optim_wrapper.optimizer
    probe = d._probe_cfg(name).model
    kind = cfg.model.backbone.type
    assert probe.backbone.type == ('SwinTransformer' if 'Swin' in kind
                                   else 'VisionTransformer')
    assert probe.backbone.init_cfg.type == 'Pretrained'
