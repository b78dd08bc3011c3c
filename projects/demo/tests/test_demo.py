"""The main job end to end on a small subset (the full run is `make demo`),
and the pretraining configs it sets up."""
import json
import os
import subprocess
import sys

import pytest

from projects.common.results import results_path
from projects.demo import cli
from tests.helpers import load_tool

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
# the smoke demo's console, every line (stdout and stderr)
DEMO_CONSOLE_LINES = 80


def _demo(work_dir, *extra):
    return subprocess.run([
        sys.executable,
        os.path.join(ROOT, 'projects', 'demo', 'tools', 'demo.py'), '--smoke',
        '--work-dir',
        str(work_dir), *extra
    ],
                          capture_output=True,
                          text=True,
                          timeout=900)


def _file_state(path):
    """The bytes and modification time of a file (None when absent)."""
    if not os.path.exists(path):
        return None
    with open(path, 'rb') as f:
        return f.read(), os.stat(path).st_mtime_ns


def _plant_killed_invocation(work_dir):
    """What a first demo killed during pretraining leaves of its wall time:
    100 s of demo, 60 s of it pretraining."""
    earlier = dict(started='2026-01-01T00:00:00+00:00', wall_s=100.)
    (work_dir / 'siameseim').mkdir(parents=True)
    (work_dir / 'wall_time.json').write_text(
        json.dumps(dict(invocations=[earlier])))
    (work_dir / 'siameseim' / 'pretrain_wall_time.json').write_text(
        json.dumps(dict(invocations=[dict(earlier, wall_s=60.)])))


@pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
@pytest.mark.person_matrix(
    'demo', 'checkout', 'the demo writes its results file into its work '
    'dir and leaves projects/demo/results/demo.json alone; --publish '
    'writes it')
@pytest.mark.person_matrix(
    'demo', 'checkout', 'a demo rerun after a killed one records the wall '
    'time of every invocation, summed, and says so')
def test_demo_smoke_produces_every_number_and_figure(tmp_path):
    published = results_path('demo')
    before = _file_state(published)
    _plant_killed_invocation(tmp_path)
    out = _demo(tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    report = tmp_path / 'report.md'
    assert f'report: {report}' in out.stdout
    text = report.read_text()
    for row in ('| siameseim |', '| siameseim initial weights |',
                '| raw pixels (784 values) |'):
        assert row in text
    # the reference ViT is asked for (reference_init=True), not run
    assert 'mmpretrain ViT init' not in text
    assert not (tmp_path / 'results' / 'random_init.json').exists()
    assert 'SiameseIM vs. its own initial weights' in text
    assert 'Versus raw pixels (as features, no centring): kNN' in text
    # the protocol text comes from the smoke config that ran
    assert "k=20, T=0.07, on the linear probe's 400 training images " \
        '(unflipped)' in text
    assert '1 epoch(s) on 400 training images' in text
    assert 'top-1 on the first 300 test images' in text
    assert '1 epoch(s) on 256 training images at batch 64' in text
    # the floor is the run's own start, saved before its first step
    assert (tmp_path / 'siameseim' / 'initial_weights.pth').exists()
    for name in ('siameseim', 'siameseim_initial_weights'):
        res = json.loads(
            (tmp_path / 'results' / f'{name}.json').read_text())['result']
        for key in ('knn', 'linear', 'fewshot'):
            assert 0 <= res[key] <= 100
    for fig in ('training_curves.png', 'knn_curve.png', 'accuracy.png',
                'two_view_sample.png'):
        path = tmp_path / 'figures' / fig
        assert path.stat().st_size > 10_000, fig
    assert '![online kNN](figures/knn_curve.png)' in text
    assert 'every 2 iterations' in text
    # the results file: in the work dir; projects/demo/results not touched ...
    demo = json.loads((tmp_path / 'demo.json').read_text())
    assert demo['meta']['command'].startswith(
        'projects/demo/tools/demo.py --smoke')
    assert demo['data']['smoke'] is True
    assert [r['method'] for r in demo['data']['rows']
            ] == ['siameseim', 'siameseim initial weights']
    pixels = demo['data']['pixels']
    assert pixels['dim'] == 784
    for key in ('knn', 'linear', 'fewshot'):
        assert 0 <= pixels[key] <= 100
    assert f'results file: {tmp_path / "demo.json"}' in out.stdout
    assert 'projects/demo/results/ not changed (--publish writes' in \
        out.stdout
    assert _file_state(published) == before
    # ... with the wall times of the killed invocation added
    data = demo['data']
    assert data['invocations'] == 2 and data['wall_s'] > 100
    assert data['wall_time'].endswith('2 invocations')
    siameseim = data['rows'][0]
    assert siameseim['pretrain_invocations'] == 2
    assert 60 < siameseim['pretrain_wall_s'] < data['wall_s']
    assert 'summed over the 2 invocations' in out.stdout
    assert '(resumed; the sum of 2 invocations)' in text
    # ... and the console: a header per run, no whole-config dump, none of
    # the Runner's environment, hook table or frozen-parameter lines, and
    # a line budget (58 lines on 2026-11-26, 749 before)
    assert f'  output: {tmp_path / "siameseim"}' in out.stdout
    console = out.stdout + out.stderr
    for detail in ('Config:', 'System environment', 'Hooks will be executed',
                   'requires_grad=False', 'paramwise_options'):
        assert detail not in console, detail
    assert len(console.splitlines()) <= DEMO_CONSOLE_LINES, console
    # a rerun reuses every finished stage instead of starting over; asked
    # to publish (into another folder), it writes there too
    again = _demo(tmp_path, '--publish', '--results-dir',
                  str(tmp_path / 'published'))
    assert again.returncode == 0, again.stderr[-2000:]
    assert 'pretraining already finished' in again.stdout
    assert 'linear probe (' not in again.stdout
    copy = json.loads((tmp_path / 'published' / 'demo.json').read_text())
    assert copy['data'] == json.loads(
        (tmp_path / 'demo.json').read_text())['data']
    assert copy['data']['invocations'] == 3
    assert f'published: {tmp_path / "published" / "demo.json"}' in \
        again.stdout
    assert _file_state(published) == before
    # the reference ViT, asked for: one more row, the rest reused
    ref = _demo(tmp_path, '--cfg-options', 'reference_init=True')
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert 'random_init: linear probe' in ref.stdout
    assert 'siameseim: linear probe' not in ref.stdout
    assert "| mmpretrain ViT init (not this run's start) |" in \
        report.read_text()
    assert len(
        json.loads((tmp_path / 'demo.json').read_text())['data']['rows']) == 3


@pytest.mark.person_matrix(
    'demo', 'checkout', '--publish --smoke is refused before any work: '
    'smoke numbers never replace the published '
    'projects/demo/results/demo.json')
def test_publishing_smoke_numbers_is_refused(tmp_path):
    published = results_path('demo')
    before = _file_state(published)
    out = _demo(tmp_path / 'wd', '--publish')
    assert out.returncode != 0
    assert '--publish --smoke: the smoke numbers are not meaningful' in \
        out.stderr
    assert 'give --results-dir DIR' in out.stderr
    assert not (tmp_path / 'wd').exists()
    assert _file_state(published) == before


@pytest.mark.person_matrix(
    'demo', 'typo_key', '--cfg-options evaluation.knn.kk=3 (or any key the '
    'demo config lacks): refused before any work, naming the key, its '
    'place and the nearest valid keys')
def test_a_misspelt_demo_option_is_refused(tmp_path):
    out = _demo(tmp_path / 'wd', '--cfg-options', 'evaluation.knn.kk=3',
                'pretrain_epoch=2')
    assert out.returncode != 0
    assert ("evaluation.knn.kk: evaluation.knn has no 'kk'; did you mean "
            "'k'?") in out.stderr, out.stderr[-2000:]
    assert ("pretrain_epoch: the top level has no 'pretrain_epoch'; did you "
            "mean 'pretrain_epochs'") in out.stderr
    assert not (tmp_path / 'wd').exists()


@pytest.mark.person_matrix(
    'evaluation', 'typo_key', 'FrozenBackboneProtocol: a misspelt, missing '
    'or non-numeric knn / linear / fewshot setting is named with the '
    'nearest valid keys')
def test_the_protocol_names_misspelt_settings(tmp_path):
    from projects.common.evaluation import FrozenBackboneProtocol
    probe = os.path.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                         'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
    with pytest.raises(ValueError) as refused:
        FrozenBackboneProtocol(
            probe,
            str(tmp_path),
            knn=dict(kk=3, temperature=0.07, train_samples=10),
            linear=dict(train_samples='all', epochs=1),
            fewshot=dict(fraktion=0.01))
    message = str(refused.value)
    assert "knn.kk: no such setting; did you mean 'k'?" in message
    assert 'knn.k: missing' in message
    assert "linear.train_samples='all': a number was expected" in message
    assert "fewshot.fraktion: no such setting; did you mean 'fraction'?" \
        in message


def test_missing_dataset_gives_one_clear_message(tmp_path):
    out = _demo(tmp_path, '--data-root', str(tmp_path / 'nowhere'))
    assert out.returncode != 0
    assert 'Fashion-MNIST is missing' in out.stderr
    assert 'dataset-fashion-mnist' in out.stderr


@pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
@pytest.mark.fault_matrix(
    'demo', 'changed_run', 'evaluation stage rerun with other settings '
    '(--cfg-options evaluation.*) into the same '
    '--work-dir: refused naming the results file and '
    'each difference; the results are kept')
def test_a_rerun_with_other_evaluation_settings_is_refused(
        tmp_path, monkeypatch):
    """Before: the results of k=20 were reported as those of k=5."""
    from tests.user_files import snapshot
    monkeypatch.chdir(ROOT)  # as projects/demo/tools/demo.py runs
    demo = load_tool('projects/demo/tools/demo.py')
    tiny = [
        'evaluation.knn.train_samples=100',
        'evaluation.linear.train_samples=100',
        'evaluation.fewshot.fraction=0.0005', 'evaluation.fewshot.folds=2',
        'evaluation.test_samples=100'
    ]

    def evaluate(*options):
        args = demo.parse_args([
            '--smoke', '--work-dir',
            str(tmp_path), '--cfg-options', *tiny, *options
        ])
        return demo.build_protocol(
            demo.load_demo_config(args), args.work_dir,
            args.data_root).evaluate('random_init', None)

    first = evaluate()
    before = snapshot(tmp_path)
    assert evaluate() == first  # the same settings: reused
    with pytest.raises(ValueError) as err:
        evaluate('evaluation.knn.k=5')
    assert str(err.value).startswith(
        f'{tmp_path}/results/random_init.json was computed with other '
        'settings: knn.k: 20 there, 5 now.')
    assert snapshot(tmp_path) == before


def _run_cfg(demo, tmp_path, method, argv=()):
    args = demo.parse_args(['--work-dir', str(tmp_path), *argv])
    demo_cfg = demo.load_demo_config(args)
    path = cli.pretrain_config_path(method, demo_cfg)
    return demo.pretrain_run_cfg(demo_cfg, path, str(tmp_path / method), args)


@pytest.mark.parametrize('method', ['siameseim', 'mae', 'mocov3'])
def test_seed_and_fp32_options_reach_the_pretraining_config(tmp_path, method):
    demo = load_tool('projects/demo/tools/demo.py')
    default = _run_cfg(demo, tmp_path, method)
    assert default.randomness.seed == 0
    assert default.work_dir == str(tmp_path / method)

    cfg = _run_cfg(demo, tmp_path, method, ['--seed', '3', '--fp32'])
    assert cfg.randomness.seed == 3
    # fp32 is mmengine's plain OptimWrapper: no autocast at all
    assert cfg.optim_wrapper.type == 'OptimWrapper'
    assert 'dtype' not in cfg.optim_wrapper
    assert cfg.optim_wrapper.optimizer == default.optim_wrapper.optimizer
    # the seed replaces only the seed: rank offsets stay as configured
    assert cfg.randomness.get('diff_rank_seed') == \
        default.randomness.get('diff_rank_seed')


def test_smoke_settings_come_from_the_smoke_config(tmp_path):
    demo = load_tool('projects/demo/tools/demo.py')
    cfg = _run_cfg(demo, tmp_path, 'siameseim', ['--smoke'])
    assert cfg.train_dataloader.dataset.indices == 256
    assert cfg.train_dataloader.batch_size == 64
    assert cfg.default_hooks.logger.interval == 2
    knn = [h for h in cfg.custom_hooks if h.type == 'OnlineKNNHook'][0]
    assert knn.interval == 2 and knn.k == 20
    assert knn.bank_dataloader.dataset.indices == 200
    assert knn.query_dataloader.dataset.data_prefix == \
        cfg.train_dataloader.dataset.data_prefix


@pytest.mark.parametrize('method', ['siameseim', 'mae', 'mocov3'])
def test_pretraining_resumes_exactly_from_iteration_checkpoints(
        tmp_path, method):
    """An interrupted demo continues from its last iteration checkpoint with
    the exact-resume loop (tests/test_engine/test_exact_resume_loop.py)."""
    cfg = _run_cfg(load_tool('projects/demo/tools/demo.py'), tmp_path, method)
    assert cfg.train_cfg.type == 'ExactResumeEpochBasedTrainLoop'
    iteration_ckpts = [
        h for h in cfg.custom_hooks
        if h.type == 'CheckpointHook' and not h.by_epoch
    ]
    assert [h.interval for h in iteration_ckpts] == [200]
