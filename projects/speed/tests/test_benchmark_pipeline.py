import json
import math
import os
import subprocess
import sys

import pytest

from projects.common.results import read_results, table_renderers
from projects.speed import pipeline as P
from projects.speed.pipeline import step_rate_from_json
from tests.helpers import load_tool

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOL = os.path.join(ROOT, 'projects', 'speed', 'tools', 'pipeline.py')


def _tool():
    return load_tool('projects/speed/tools/pipeline.py')


def test_tiny_run_with_profile_workers_and_step_rate_from_json(tmp_path):
    # the format projects/speed/tools/pretrain.py --json prints
    pretrain = tmp_path / 'pretrain.json'
    pretrain.write_text(
        json.dumps(
            dict(
                rows=[
                    dict(model='siameseim', images_per_s=500.0),
                    dict(model='mae', images_per_s=900.0)
                ],
                siameseim_over_mae=1.8)))
    out = subprocess.run([
        sys.executable, TOOL, '--images', '3', '--large', '1', '--large-size',
        '120', '90', '--repeats', '1', '--image-size', '80', '60', '--profile',
        '--pretrain-json',
        str(pretrain), '--official-repo', '', '--workers', '1', '--json'
    ],
                         capture_output=True,
                         text=True,
                         timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res['step_images_per_s'] == 500.0
    # the authors' pipeline was not asked for: left out, and said so
    assert [r['pipeline'] for r in res['rows']
            ] == ['before', 'after', 'deviceaug-cpu', 'torchvision']
    assert any('authors: left out' in n for n in res['notes'])
    assert 'left out' in out.stderr
    for row in res['rows']:
        assert row['images'] == 4 and row['repeats'] == 1
        assert row['images_per_s'] > 0
        assert row['ms_per_image'] == pytest.approx(1e3 / row['images_per_s'])
        assert row['workers_per_gpu'] == math.ceil(500 / row['images_per_s'])
    profile = res['profile_ms_per_image']
    for step in ('StrictLoadImageFromFile', 'TwoViewRandomResizedCrop',
                 'PerViewTransforms', 'BlockwiseMaskGenerator', 'PackInputs',
                 '  view a: FastGaussianBlur', '  view b: Solarize'):
        assert profile['after'][step] > 0, step
    assert '  view a: GaussianBlur' in profile['before']
    # the accelerator option's CPU part has no colour step left
    assert 'PerViewTransforms' not in profile['deviceaug-cpu']
    assert [w['num_workers'] for w in res['workers']] == [1]
    assert res['workers'][0]['images_per_s'] > 0
    assert 'shared' in res['conditions']
    table = P.render(dict(data=res))
    assert table.splitlines()[0].startswith('| pipeline | images/s per')
    assert 'after / before: ' in table and '| num_workers |' in table


def test_write_goes_through_the_results_file(tmp_path, monkeypatch):
    import projects.common.results as results
    monkeypatch.setitem(results.RESULTS_HOMES, 'pipeline', str(tmp_path))
    _tool().main([
        '--images', '2', '--large', '0', '--repeats', '1', '--image-size',
        '64', '48', '--official-repo', '', '--device-config', '', '--write'
    ])
    written = read_results('pipeline', str(tmp_path))
    assert set(written['meta']) >= {'date', 'machine', 'command', 'commit'}
    assert [r['pipeline'] for r in written['data']['rows']
            ] == ['before', 'after', 'torchvision']
    assert table_renderers()['pipeline'] is P.render
    assert '| before |' in P.render(written)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.path.isfile('/tmp/sim-official/models_sim.py'),
    reason="needs a clone of the authors' repository")
def test_the_authors_pipeline_runs():
    pipeline = _tool().build_authors_pipeline('/tmp/sim-official')
    paths = P.write_jpegs(str(os.environ.get('TMPDIR', '/tmp')), 1, (120, 90))
    (x1, x2, *rel_pos), mask = pipeline(paths[0])
    assert tuple(x1.shape) == tuple(x2.shape) == (3, 224, 224)
    assert mask.sum() == 118


def test_bad_options_are_named(tmp_path):
    with pytest.raises(SystemExit):
        _tool().main(['--config', str(tmp_path / 'nope.py')])
    with pytest.raises(SystemExit):
        _tool().main(['--large', '-1'])


def test_bad_pretrain_json_names_the_file(tmp_path):
    bad = tmp_path / 'bad.json'
    bad.write_text('{"rows": [{"model": "mae", "images_per_s": 1}]}')
    with pytest.raises(SystemExit, match='bad.json'):
        step_rate_from_json(str(bad))
