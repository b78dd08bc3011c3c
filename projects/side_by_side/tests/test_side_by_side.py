"""projects/side_by_side/tools/side_by_side.py: the shared settings, the
training subset and
the table.

(Training the authors' side needs a clone of their code; the tool was run
against one for the README's table.)
"""
import os
import subprocess
import sys

import pytest
from mmengine.config import Config

from projects.demo import format_seed_table

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OURS_CFG = os.path.join(
    ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-'
    'p4_1xb64-bf16-coslr-1e_fashionmnist.py')


@pytest.fixture
def tools(monkeypatch):
    # what `python projects/side_by_side/tools/side_by_side.py` has on sys.path
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'side_by_side', 'tools'))
    import side_by_side
    import side_by_side_authors
    return side_by_side, side_by_side_authors


def test_settings_are_read_off_our_fashionmnist_config(tools):
    from projects.side_by_side import settings
    s = settings(Config.fromfile(OURS_CFG))
    assert (s['img'], s['patch'], s['in_chans']) == (32, 4, 1)
    assert (s['dims'], s['depth'], s['heads'], s['decoder_heads']) == \
        (128, 4, 4, 4)
    assert (s['projector_depth'], s['predictor_depth']) == (2, 2)
    assert (s['num_masking_patches'], s['min_mask_patches']) == (38, 4)
    assert s['crop_min'] == 0.25 and s['batch'] == 64
    assert (s['lr'], s['beta2'], s['weight_decay'], s['clip_grad']) == \
        (1e-3, 0.95, 0.05, 1.0)
    assert s['warmup_epochs'] == 0.1 and s['min_lr'] == 1e-6
    assert s['mm'] == pytest.approx(0.99)  # our momentum 0.01 -> 0
    assert s['mean'] == pytest.approx(72.94 / 255)


def test_training_subset_is_fixed_and_checked(tools):
    tool = tools[0]
    a = tool.train_indices(640)
    assert a == tool.train_indices(640) and len(set(a)) == 640
    assert a == sorted(a) and 0 <= a[0] and a[-1] < 60000
    with pytest.raises(ValueError, match='--train-images'):
        tool.train_indices(0)


def test_our_run_uses_the_subset_seed_and_fp32(tools, tmp_path):
    tool = tools[0]
    args = tool.parse_args(['--fp32', '--epochs', '2'])
    demo_cfg = Config.fromfile(os.path.join(ROOT, tool.CONFIG))
    cfg = tool.ours_cfg(args, demo_cfg, 3, str(tmp_path), [1, 5, 7])
    assert cfg.train_dataloader.dataset.indices == [1, 5, 7]
    assert cfg.randomness.seed == 3 and cfg.train_cfg.max_epochs == 2
    assert cfg.optim_wrapper.type == 'OptimWrapper'
    assert cfg.work_dir == str(tmp_path / 'ours')


def test_table_gives_mean_spread_and_every_run():
    runs = [
        dict(
            impl=impl,
            seed=seed,
            knn=k,
            linear=k + 1,
            fewshot=k - 1,
            images_per_s=100. + seed,
            wall_s=60.) for impl, k0 in (('ours', 70.), ('authors', 60.))
        for seed, k in enumerate((k0, k0 + 2, k0 + 4))
    ]
    table = format_seed_table(
        runs, dict(ours='ours (mmsiameseim)', authors="the authors' code"),
        ['scored on 5000 test images'])
    assert '| ours (mmsiameseim) | 0,1,2 | 72.00 ± 2.00 (70.00-74.00) |' \
        in table
    assert "| the authors' code | 0,1,2 | 62.00 ± 2.00 (60.00-64.00) |" \
        in table
    assert 'scored on 5000 test images' in table
    assert table.count('| authors |') == 3


def test_a_folder_without_their_code_is_refused(tmp_path):
    out = subprocess.run([
        sys.executable,
        os.path.join(ROOT, 'projects', 'side_by_side', 'tools',
                     'side_by_side.py'), '--official-repo',
        str(tmp_path)
    ],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode != 0
    assert 'no models_sim.py' in out.stderr


def test_results_file_written_when_every_run_finished(tools, tmp_path,
                                                      monkeypatch):
    """The writer, with the training and the evaluation stubbed out (the
    real runs are the tool's job: tens of minutes)."""
    import projects.demo
    from projects.common.docs_render import load_renderers
    from projects.common.results import read_results, table_renderers
    tool = tools[0]

    class Protocol:

        def evaluate(self, impl, checkpoint, model):
            return dict(knn=70.0, linear=71.0, fewshot=50.0)

        def describe(self):
            return ['* kNN: stub']

    seen = []
    monkeypatch.setattr(tool, 'check_dataset', lambda root: None)
    monkeypatch.setattr(tool, 'build_protocol', lambda *a: Protocol())
    monkeypatch.setattr(
        projects.demo, 'pretrain_once',
        lambda cfg: seen.append(cfg.work_dir) or dict(
            checkpoint='x.pth', images_per_s=100.0, wall_s=60.0))
    rdir = tmp_path / 'results'
    tool.main([
        '--impls', 'ours', '--seeds', '0,1', '--train-images', '64',
        '--work-dir',
        str(tmp_path / 'wd'), '--results-dir',
        str(rdir)
    ])
    assert len(seen) == 2
    results = read_results('side_by_side', str(rdir))
    data = results['data']
    assert [(r['impl'], r['seed']) for r in data['runs']] == [('ours', 0),
                                                              ('ours', 1)]
    assert data['args']['train_images'] == 64
    assert data['protocol'] == ['* kNN: stub']
    load_renderers()
    table = table_renderers()['side_by_side'](results)
    assert '| ours (mmsiameseim) | 0,1 | 70.00 ± 0.00 (70.00-70.00) |' \
        in table
    assert 'Budget per run: 64 training images x 1 epoch(s)' in table
