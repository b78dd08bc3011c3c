"""The main job end to end on a small subset (the full run is `make demo`)."""
import json
import os
import subprocess
import sys

import pytest

from tests.helpers import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DATA = os.path.join(ROOT, 'data', 'fashion_mnist')


def _demo(work_dir, *extra):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, 'tools', 'demo.py'), '--smoke',
         '--work-dir', str(work_dir), *extra],
        capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_demo_smoke_produces_every_number_and_figure(tmp_path):
    out = _demo(tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    report = tmp_path / 'report.md'
    assert f'report: {report}' in out.stdout
    text = report.read_text()
    for row in ('| siameseim |', '| siameseim initial weights |',
                '| mmpretrain ViT init (not this run\'s start) |',
                '| raw pixels'):
        assert row in text
    assert 'SiameseIM vs. its own initial weights' in text
    # the floor is the run's own start, saved before its first step
    assert (tmp_path / 'siameseim' / 'initial_weights.pth').exists()
    for name in ('siameseim', 'siameseim_initial_weights', 'random_init'):
        res = json.loads((tmp_path / 'results' / f'{name}.json').read_text())
        for key in ('knn', 'linear', 'fewshot'):
            assert 0 <= res[key] <= 100
    for fig in ('training_curves.png', 'accuracy.png',
                'two_view_sample.png'):
        path = tmp_path / 'figures' / fig
        assert path.stat().st_size > 10_000, fig
    # a rerun reuses every finished stage instead of starting over
    again = _demo(tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert 'pretraining already finished' in again.stdout
    assert 'linear probe (' not in again.stdout


def test_missing_dataset_gives_one_clear_message(tmp_path):
    out = _demo(tmp_path, '--data-root', str(tmp_path / 'nowhere'))
    assert out.returncode != 0
    assert 'Fashion-MNIST is missing' in out.stderr
    assert 'dataset-fashion-mnist' in out.stderr


@pytest.mark.parametrize('method', ['siameseim', 'mae', 'mocov3'])
def test_seed_and_fp32_options_reach_the_pretraining_config(tmp_path, method):
    demo = load_tool('demo.py')
    default = demo.Demo(demo.parse_args(['--work-dir', str(tmp_path)]))
    cfg = default.pretrain_run_cfg(method)
    assert cfg.randomness.seed == 0
    assert cfg.work_dir == str(tmp_path / method)

    args = demo.parse_args(
        ['--work-dir', str(tmp_path), '--seed', '3', '--fp32'])
    cfg = demo.Demo(args).pretrain_run_cfg(method)
    assert cfg.randomness.seed == 3
    assert cfg.optim_wrapper.dtype == 'float32'
    # the seed replaces only the seed: rank offsets stay as configured
    assert cfg.randomness.get('diff_rank_seed') == default.pretrain_run_cfg(
        method).randomness.get('diff_rank_seed')


@pytest.mark.parametrize('method', ['siameseim', 'mae', 'mocov3'])
def test_pretraining_resumes_exactly_from_iteration_checkpoints(tmp_path,
                                                                method):
    """An interrupted demo continues from its last iteration checkpoint with
    the exact-resume loop (tests/test_engine/test_exact_resume_loop.py)."""
    demo = load_tool('demo.py')
    cfg = demo.Demo(demo.parse_args(['--work-dir', str(tmp_path)
                                     ])).pretrain_run_cfg(method)
    assert cfg.resume is True
    assert cfg.train_cfg.type == 'ExactResumeEpochBasedTrainLoop'
    iteration_ckpts = [h for h in cfg.custom_hooks
                       if h.type == 'CheckpointHook' and not h.by_epoch]
    assert [h.interval for h in iteration_ckpts] == [200]
