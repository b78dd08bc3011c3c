"""Every row of the paper's Table 3 is a config of the registered components
(configs/pretrain/ablations): its switches are the paper's, it builds, and it
trains one step on CPU."""
import copy
import os

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.dataset import default_collate
from mmpretrain.registry import MODELS, TRANSFORMS

import mmsiameseim  # noqa: F401
from mmsiameseim_lab import table3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# Table 3 of the paper: target, views, colour aug, mask, BN/LN, loss norm,
# loss type.
PAPER_TABLE3 = {
    'a': ('pixel', 'same', False, 'random', 'LN', 'mae-like', 'dense'),
    'b': ('feature', 'same', False, 'random', 'LN', 'moco-like', 'dense'),
    'c': ('pixel', 'same', True, 'random', 'LN', 'mae-like', 'dense'),
    'd': ('pixel', 'different', False, 'random', 'LN', 'mae-like', 'dense'),
    'e': ('feature', 'different', False, 'random', 'LN', 'moco-like',
          'dense'),
    'f': ('feature', 'different', True, 'random', 'LN', 'moco-like',
          'dense'),
    'g': ('feature', 'different', True, 'random', 'BN', 'moco-like',
          'dense'),
    'h': ('feature', 'different', True, 'blockwise', 'BN', 'moco-like',
          'dense'),
    'i': ('feature', 'different', True, 'blockwise', 'BN', 'mae-like',
          'dense'),
    'j': ('feature', 'different', True, 'random', 'BN', 'moco-like',
          'global'),
}


ROWS = table3.row_configs(os.path.join(ROOT, 'configs', 'pretrain',
                                       'ablations'))
DEMO_CFG = os.path.join(ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-'
                        'p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def test_ten_rows_with_the_papers_switches():
    assert sorted(ROWS) == sorted(PAPER_TABLE3)
    for row, path in ROWS.items():
        cfg = Config.fromfile(path)
        factors = table3.table3_factors(cfg)
        assert tuple(factors[c] for c in table3.COLUMNS) == \
            PAPER_TABLE3[row], row
        # the paper's scale is kept: ViT-B/16, 400 epochs, batch 4096
        assert cfg.model.backbone.arch == 'b'
        assert cfg.train_cfg.max_epochs == 400
        assert cfg.train_dataloader.batch_size * 16 == 4096


def test_the_default_row_is_the_default_config():
    default = Config.fromfile(os.path.join(
        ROOT, 'configs/pretrain/'
        'siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'))
    row_i = Config.fromfile(ROWS['i'])
    assert row_i.model == default.model
    assert row_i.train_dataloader == default.train_dataloader


def test_each_comparison_changes_exactly_the_factor_it_names():
    names = {'one view: pixel vs feature target': {'target', 'loss_norm'},
             'two views: feature vs pixel target': {'target', 'loss_norm'},
             'two views: colour augmentation on vs off': {'colour'},
             'one view: colour augmentation on vs off': {'colour'},
             'BN vs LN in projector and decoder': {'norm'},
             'blockwise vs random mask': {'mask'},
             'MAE-like vs MoCo-like loss normalisation': {'loss_norm'},
             'dense vs global loss': {'loss'}}
    for x, y, what in table3.COMPARISONS:
        fx = table3.table3_factors(Config.fromfile(ROWS[x]))
        fy = table3.table3_factors(Config.fromfile(ROWS[y]))
        changed = {k for k in fx if fx[k] != fy[k]}
        if what in names:  # (the paper pairs each target with its best norm)
            assert changed == names[what], (x, y, changed)
        else:  # (f) vs (a): the best one-view and two-view settings
            assert 'views' in changed


def test_miniature_keeps_every_switch():
    demo = Config.fromfile(DEMO_CFG)
    for row, path in ROWS.items():
        factors = table3.table3_factors(Config.fromfile(path))
        mini = table3.miniature_cfg(factors, demo)
        assert table3.table3_factors(mini) == factors, row
        assert mini.model.backbone.arch == demo.model.backbone.arch
    assert table3.table3_factors(demo) == dict(
        zip(table3.COLUMNS, PAPER_TABLE3['i']))


def _shrunk(cfg):
    """The row's model and pipeline, with a tiny encoder and decoder."""
    model = copy.deepcopy(cfg.model)
    model.backbone.arch = dict(embed_dims=32, num_layers=1, num_heads=2,
                               feedforward_channels=64)
    model.neck.update(in_channels=32, embed_dims=32, num_heads=2,
                      projector_depth=1, predictor_depth=1)
    if model.get('target_type', 'feature') == 'feature':
        model.neck.pop('out_channels', None)
    return model


@pytest.mark.parametrize('row', sorted(PAPER_TABLE3))
def test_row_builds_and_trains_one_step(row):
    from mmengine.registry import init_default_scope
    init_default_scope('mmpretrain')  # mmcv's RandomApply builds by scope
    cfg = Config.fromfile(ROWS[row])
    np.random.seed(0)
    torch.manual_seed(0)
    pipeline = [TRANSFORMS.build(t) for t in
                cfg.train_dataloader.dataset.pipeline[1:]]  # after loading
    samples = []
    for i in range(2):
        results = dict(img=np.random.randint(0, 256, (240, 260, 3),
                                             dtype=np.uint8),
                       img_path=f'img{i}.jpg')
        for t in pipeline:
            results = t(results)
        samples.append(results)
    model = MODELS.build(_shrunk(cfg))
    model.init_weights()
    data = model.data_preprocessor(default_collate(samples), training=True)
    losses = model(**data, mode='loss')
    assert torch.isfinite(losses['loss'])
    losses['loss'].backward()
    assert model.neck.pred.weight.grad is not None
    factors = table3.table3_factors(cfg)
    assert (model.target is None) == (factors['target'] == 'pixel')
    assert model.head.loss_type == factors['loss']
    assert model.head.loss_module.target_norm == factors['loss_norm']
    norm = type(model.neck.predictor_blocks[0].ln1).__name__
    assert norm == ('LayerNorm' if factors['norm'] == 'LN' else 'TokenBatchNorm')
    views = data['inputs']
    same = torch.equal(views[0], views[1])
    assert same == (factors['views'] == 'same')


@pytest.mark.skipif(
    not os.path.exists(os.path.join(ROOT, 'data', 'fashion_mnist',
                                    't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_miniature_run_smoke(tmp_path):
    import subprocess
    import sys
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, 'tools', 'ablation_table3.py'),
         '--smoke', '--rows', 'g,j', '--work-dir', str(tmp_path),
         '--cfg-options',
         'pretrain_overrides.train_dataloader.dataset.indices=64'],
        capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    text = (tmp_path / 'table3.md').read_text()
    assert '| (g) | feature | yes | yes | random | BN | moco-like | dense |' \
        in text
    assert '| (j) | feature | yes | yes | random | BN | moco-like | global |' \
        in text
    assert '| (g) - (j) | dense vs global loss | +1.6 |' in text
    # the settings text comes from the configs that ran
    assert '1 epoch(s) on 64 training images at batch 64' in text
    assert 'k=20, T=0.07, on 400 random training images' in text
    # the floor: row (g)'s run at its own initial weights
    assert "Floor: row (g)'s run at its own initial weights" in text
    assert (tmp_path / 'table3g' / 'initial_weights.pth').exists()
    assert (tmp_path / 'table3.png').stat().st_size > 10_000


@pytest.mark.parametrize('argv, seed', [([], 0), (['--seed', '4'], 4)])
def test_seed_option_reaches_the_row_pretraining(tmp_path, argv, seed,
                                                 monkeypatch):
    # what `python tools/ablation_table3.py` has on sys.path
    monkeypatch.syspath_prepend(os.path.join(ROOT, 'tools'))
    import ablation_table3 as tool
    args = tool.parse_args(['--work-dir', str(tmp_path)] + argv)
    t3 = Config.fromfile(os.path.join(ROOT, tool.CONFIG))
    factors = {'g': table3.table3_factors(Config.fromfile(ROWS['g']))}
    cfg = tool.row_run_cfg(t3, factors, 'g', str(tmp_path), args)
    assert cfg.randomness.seed == seed
    assert cfg.work_dir == str(tmp_path / 'table3g')
    assert cfg.train_dataloader.dataset.indices == 16000
    assert table3.table3_factors(cfg) == factors['g']
