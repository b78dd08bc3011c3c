"""Every row of the paper's Table 3 is a config of the registered components
(configs/pretrain/ablations): its switches are the paper's, it builds, and it
trains one step on CPU."""
import copy
import inspect
import json
import os

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.dataset import default_collate
from mmpretrain.registry import MODELS, TRANSFORMS

import mmsiameseim  # noqa: F401
from projects import table3

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Table 3 of the paper: target, views, colour aug, mask, BN/LN, loss norm,
# loss type.
PAPER_TABLE3 = {
    'a': ('pixel', 'same', False, 'random', 'LN', 'mae-like', 'dense'),
    'b': ('feature', 'same', False, 'random', 'LN', 'moco-like', 'dense'),
    'c': ('pixel', 'same', True, 'random', 'LN', 'mae-like', 'dense'),
    'd': ('pixel', 'different', False, 'random', 'LN', 'mae-like', 'dense'),
    'e': ('feature', 'different', False, 'random', 'LN', 'moco-like', 'dense'),
    'f': ('feature', 'different', True, 'random', 'LN', 'moco-like', 'dense'),
    'g': ('feature', 'different', True, 'random', 'BN', 'moco-like', 'dense'),
    'h':
    ('feature', 'different', True, 'blockwise', 'BN', 'moco-like', 'dense'),
    'i':
    ('feature', 'different', True, 'blockwise', 'BN', 'mae-like', 'dense'),
    'j': ('feature', 'different', True, 'random', 'BN', 'moco-like', 'global'),
}
PAPER_ROW_I = dict(zip(table3.COLUMNS, PAPER_TABLE3['i']))

ROWS = table3.row_configs(
    os.path.join(ROOT, 'configs', 'pretrain', 'ablations'))
IMAGENET_CFG = os.path.join(
    ROOT, 'configs', 'pretrain', 'siameseim_vit-base-'
    'p16_16xb256-amp-coslr-400e_in1k.py')
DEMO_CFG = os.path.join(
    ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-'
    'p4_1xb64-bf16-coslr-1e_fashionmnist.py')
# Each row as it was before the rows became overrides (main at 9c6de4b):
# its config_delta against its base, for the ImageNet configs and for the
# Fashion-MNIST miniature (then built by reading the switches back off the
# pipeline).
BEFORE = os.path.join(ROOT, 'tests', 'data', 'table3',
                      'rows_before_overrides.json')


def config_delta(base, row):
    """What ``row`` changes in ``base`` (both plain dicts from JSON): a changed
    dict is described key by key (``'_removed_'``: the keys it drops), anything
    else by its new value."""
    out = {
        k:
        v if k not in base
        or not (isinstance(v, dict) and isinstance(base[k], dict)) else
        config_delta(base[k], v)
        for k, v in row.items() if k not in base or base[k] != v
    }
    removed = sorted(k for k in base if k not in row)
    if removed:
        out['_removed_'] = removed
    return out


def _plain(cfg):
    """The config as JSON gives it back, the checkout's path as '{root}'."""
    cfg = cfg.to_dict() if isinstance(cfg, Config) else cfg
    return json.loads(json.dumps(cfg).replace(ROOT, '{root}'))


def _with_defaults(tree):
    """``tree`` with every registered ``type`` completed by its class's
    default arguments: two configs that build the same objects compare
    equal, whether or not they spell out a default."""
    if isinstance(tree, list):
        return [_with_defaults(v) for v in tree]
    if not isinstance(tree, dict):
        return tree
    out = {k: _with_defaults(v) for k, v in tree.items()}
    cls = None
    if isinstance(tree.get('type'), str):
        for registry in (MODELS, TRANSFORMS):
            cls = cls or registry.get(tree['type'])
    if cls is not None:
        try:
            params = inspect.signature(cls).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature
            params = []
        for p in params:
            if p.default is not p.empty and p.name not in out:
                out[p.name] = _plain({'v': p.default})['v']
    return out


def test_ten_rows_with_the_papers_switches():
    assert sorted(ROWS) == sorted(PAPER_TABLE3)
    for row, path in ROWS.items():
        cfg = Config.fromfile(path)
        switches = table3.read_row(path)
        assert tuple(switches[c] for c in table3.COLUMNS) == \
            PAPER_TABLE3[row], row
        # the paper's scale is kept: ViT-B/16, 400 epochs, batch 4096
        assert cfg.model.backbone.arch == 'b'
        assert cfg.train_cfg.max_epochs == 400
        assert cfg.train_dataloader.batch_size * 16 == 4096


def test_the_default_row_is_the_default_config():
    default = Config.fromfile(IMAGENET_CFG)
    row_i = Config.fromfile(ROWS['i'])
    assert row_i.model == default.model
    assert row_i.train_dataloader == default.train_dataloader


def test_imagenet_rows_are_the_configs_they_were():
    """Every row's merged config changes its base exactly as before the rows
    became overrides."""
    with open(BEFORE) as f:
        before = json.load(f)['imagenet']
    base = _plain(Config.fromfile(IMAGENET_CFG))
    for row, path in ROWS.items():
        assert config_delta(base, _plain(Config.fromfile(path))) == \
            before[row], row


def test_the_override_on_imagenet_is_the_row_config():
    """The ablation configs are the overrides written out: applied to the
    ImageNet 400-epoch config, each row's switches give its config (up to
    arguments spelled out at their default value)."""
    base = Config.fromfile(IMAGENET_CFG)
    for row, path in ROWS.items():
        applied = table3.apply_table3_row(base, table3.read_row(path))
        assert _with_defaults(_plain(applied)) == \
            _with_defaults(_plain(Config.fromfile(path))), row
    assert _plain(base) == _plain(Config.fromfile(IMAGENET_CFG))  # as it was


def test_miniature_rows_are_the_miniatures_they_were():
    """The same override on the Fashion-MNIST demo config gives each miniature
    row exactly as the pipeline-reading code built it."""
    with open(BEFORE) as f:
        before = json.load(f)['miniature']
    demo = Config.fromfile(DEMO_CFG)
    base = _plain(demo)
    for row, path in ROWS.items():
        mini = table3.apply_table3_row(demo, table3.read_row(path))
        assert config_delta(base, _plain(mini)) == before[row], row
        assert mini.model.backbone.arch == demo.model.backbone.arch


@pytest.mark.parametrize('row, words', [
    ([1], ['is a dict of the switches', 'got list']),
    (dict(PAPER_ROW_I,
          mask='grid'), ["mask='grid' (one of ('blockwise', 'random'))"]),
    ({
        k: v
        for k, v in PAPER_ROW_I.items() if k != 'loss'
    }, ["missing ['loss']"]),
    (dict(PAPER_ROW_I,
          colour_jitter=True), ["unknown switches ['colour_jitter']"]),
])
def test_wrong_switches_are_named(row, words):
    with pytest.raises(ValueError) as err:
        table3.check_row(row, 'my_row.py')
    assert str(err.value).startswith('my_row.py: ')
    for word in words:
        assert word in str(err.value)


def test_an_override_needs_a_base_it_can_switch(tmp_path):
    demo = Config.fromfile(DEMO_CFG)
    random_mask = table3.apply_table3_row(demo,
                                          dict(PAPER_ROW_I, mask='random'))
    with pytest.raises(
            ValueError,
            match='a blockwise-mask row needs a base '
            'config with a BlockwiseMaskGenerator, not '
            'RandomPatchMaskGenerator'):
        table3.apply_table3_row(random_mask, PAPER_ROW_I)
    not_siameseim = tmp_path / 'plain.py'
    not_siameseim.write_text('model = dict(type="MAE")\n')
    with pytest.raises(
            ValueError,
            match=f'{not_siameseim}: not a SiameseIM pretraining config'):
        table3.read_row(str(not_siameseim))


def test_each_comparison_changes_exactly_the_factor_it_names():
    names = {
        'one view: pixel vs feature target': {'target', 'loss_norm'},
        'two views: feature vs pixel target': {'target', 'loss_norm'},
        'two views: colour augmentation on vs off': {'colour'},
        'one view: colour augmentation on vs off': {'colour'},
        'BN vs LN in projector and decoder': {'norm'},
        'blockwise vs random mask': {'mask'},
        'MAE-like vs MoCo-like loss normalisation': {'loss_norm'},
        'dense vs global loss': {'loss'}
    }
    for x, y, what in table3.COMPARISONS:
        fx = table3.read_row(ROWS[x])
        fy = table3.read_row(ROWS[y])
        changed = {k for k in fx if fx[k] != fy[k]}
        if what in names:  # (the paper pairs each target with its best norm)
            assert changed == names[what], (x, y, changed)
        else:  # (f) vs (a): the best one-view and two-view settings
            assert 'views' in changed


def _shrunk(cfg):
    """The row's model and pipeline, with a tiny encoder and decoder."""
    model = copy.deepcopy(cfg.model)
    model.backbone.arch = dict(
        embed_dims=32, num_layers=1, num_heads=2, feedforward_channels=64)
    model.neck.update(
        in_channels=32,
        embed_dims=32,
        num_heads=2,
        projector_depth=1,
        predictor_depth=1)
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
    pipeline = [
        TRANSFORMS.build(t) for t in cfg.train_dataloader.dataset.pipeline[1:]
    ]  # after loading
    samples = []
    for i in range(2):
        results = dict(
            img=np.random.randint(0, 256, (240, 260, 3), dtype=np.uint8),
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
    factors = table3.read_row(ROWS[row])
    assert (model.target is None) == (factors['target'] == 'pixel')
    assert model.head.loss_type == factors['loss']
    assert model.head.loss_module.target_norm == factors['loss_norm']
    norm = type(model.neck.predictor_blocks[0].ln1).__name__
    assert norm == ('LayerNorm'
                    if factors['norm'] == 'LN' else 'TokenBatchNorm')
    views = data['inputs']
    same = torch.equal(views[0], views[1])
    assert same == (factors['views'] == 'same')


@pytest.mark.skipif(
    not os.path.exists(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_miniature_run_smoke(tmp_path):
    import subprocess
    import sys
    out = subprocess.run([
        sys.executable,
        os.path.join(ROOT, 'projects', 'table3', 'tools',
                     'ablation_table3.py'), '--smoke', '--rows', 'g,j',
        '--work-dir',
        str(tmp_path), '--cfg-options',
        'pretrain_overrides.train_dataloader.dataset.indices=64'
    ],
                         capture_output=True,
                         text=True,
                         timeout=900)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    text = (tmp_path / 'table3.md').read_text()
    assert '| (g) | feature | yes | yes | random | BN | moco-like | dense |' \
        in text
    assert '| (j) | feature | yes | yes | random | BN | moco-like | global |' \
        in text
    assert '| (g) - (j) | dense vs global loss | +1.6 |' in text
    # the settings text comes from the configs that ran
    assert '1 epoch(s) on 64 training images at batch 64' in text
    assert "k=20, T=0.07, on the linear probe's 400 training images " \
        '(unflipped)' in text
    # the floor: row (g)'s run at its own initial weights
    assert "Floor: row (g)'s run at its own initial weights" in text
    assert (tmp_path / 'table3g' / 'initial_weights.pth').exists()
    assert (tmp_path / 'table3.png').stat().st_size > 10_000
    # the results file (--smoke: in the work dir), rendered like the docs
    from projects.common.docs_render import load_renderers
    from projects.common.results import read_results, table_renderers
    results = read_results('table3', str(tmp_path))
    assert sorted(results['data']['results']) == ['g', 'j']
    load_renderers()
    table = table_renderers()['table3'](results)
    assert '| (g) - (j) | dense vs global loss | +1.6 |' in table


@pytest.mark.parametrize('argv, seed', [([], 0), (['--seed', '4'], 4)])
def test_seed_option_reaches_the_row_pretraining(tmp_path, argv, seed,
                                                 monkeypatch):
    # what `python projects/table3/tools/ablation_table3.py` has on sys.path
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'table3', 'tools'))
    import ablation_table3 as tool
    args = tool.parse_args(['--work-dir', str(tmp_path)] + argv)
    t3 = Config.fromfile(os.path.join(ROOT, tool.CONFIG))
    factors = {'g': table3.read_row(ROWS['g'])}
    cfg = tool.row_run_cfg(t3, factors, 'g', str(tmp_path), args)
    assert cfg.randomness.seed == seed
    assert cfg.work_dir == str(tmp_path / 'table3g')
    assert cfg.train_dataloader.dataset.indices == 16000
    row_g = table3.apply_table3_row(Config.fromfile(DEMO_CFG), factors['g'])
    assert cfg.model == row_g.model
    assert cfg.train_dataloader.dataset.pipeline == \
        row_g.train_dataloader.dataset.pipeline
