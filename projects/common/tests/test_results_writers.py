"""Every run that publishes a figure writes its results file (date, machine,
command, commit, and the tool's data), and the registered renderer turns it
into the table the docs show: the benchmarks at tiny settings, and the
test-run files that conftest.py writes."""
import json
import os
import os.path as osp
import subprocess
import sys

import pytest

from projects.common.docs_render import load_renderers
from projects.common.results import (read_results, results_path,
                                     table_renderers, write_results)
from tests.helpers import ROOT

ENV = dict(os.environ, PYTHONPATH=ROOT)


def test_a_results_file_goes_to_its_home_or_the_folder_given(tmp_path):
    assert results_path('claim') == osp.join(ROOT, 'projects', 'claim',
                                             'results', 'claim.json')
    assert results_path('tests') == osp.join(ROOT, 'docs', 'results',
                                             'tests.json')
    assert results_path('claim:view',
                        str(tmp_path)) == str(tmp_path / 'claim.json')
    with pytest.raises(
            KeyError, match='RESULTS_HOMES in projects/common/'
            'results.py'):
        write_results('nonesuch', {})
    path = write_results('nonesuch', dict(v=1), results_dir=str(tmp_path))
    assert read_results('nonesuch', str(tmp_path))['data'] == dict(v=1)
    assert path == str(tmp_path / 'nonesuch.json')


def _tool(name, *argv, timeout=300):
    out = subprocess.run(
        [sys.executable, osp.join(ROOT, name), *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
        cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def _check_meta(results, command):
    meta = results['meta']
    assert command in meta['command']
    assert len(meta['commit']) == 40 and meta['machine'] and meta['date']
    assert isinstance(meta['dirty'], bool)


def _render(name, results):
    load_renderers()
    return table_renderers()[name](results)


@pytest.mark.parametrize('name, argv, first_row', [
    ('benchmark_unigrad', [
        '--batch', '2', '--tokens', '8', '--channels', '16', '--repeats', '1',
        '--step-seconds', '0.5'
    ], 'chunked | 2 x 8 x 16 | fp32 | cpu'),
    ('benchmark_attention', [
        '--arch', 'deit-t', '--batch', '2', '--img-size', '32', '--patch-size',
        '8', '--masked', '10', '--repeats', '1'
    ], 'online backbone | 2 x 3 x 7 x 64 |'),
])
def test_benchmark_writes_its_results_file_when_asked(tmp_path, name, argv,
                                                      first_row):
    tool = f'projects/speed/tools/{name.replace("benchmark_", "")}.py'
    out = _tool(tool, *argv, '--results-dir', str(tmp_path))
    assert f'results file: {tmp_path / (name + ".json")}' in out.stderr
    results = read_results(name, str(tmp_path))
    _check_meta(results, f'{tool} --')
    table = _render(name, results)
    assert first_row in table
    # the rendered table is the one the tool prints
    assert table.splitlines()[-1] in out.stdout
    # without --results-dir nothing is written
    _tool(tool, *argv)
    assert sorted(os.listdir(tmp_path)) == [f'{name}.json']


@pytest.mark.slow  # worker processes per model; tests/test_tools/
# test_benchmark_pretrain.py covers the tool's tiny runs in the quick tier
def test_benchmark_pretrain_writes_its_results_file(tmp_path):
    out = _tool(
        'projects/speed/tools/pretrain.py',
        '--arch',
        'deit-t',
        '--batch',
        '2',
        '--steps',
        '1',
        '--warmup',
        '1',
        '--img-size',
        '32',
        '--gemm-size',
        '256',
        '--models',
        'siameseim,mae',
        '--results-dir',
        str(tmp_path),
        timeout=600)
    results = read_results('benchmark_pretrain', str(tmp_path))
    _check_meta(results, 'projects/speed/tools/pretrain.py --arch deit-t')
    assert {r['model']
            for r in results['data']['rows']} == {'siameseim', 'mae', 'gemm'}
    table = _render('benchmark_pretrain', results)
    assert table.splitlines()[0] in out.stdout


def _pytest(tmp_path, *argv):
    env = dict(
        ENV, MMSIAMESEIM_RESULTS='1', MMSIAMESEIM_RESULTS_DIR=str(tmp_path))
    return subprocess.run([
        sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', *argv
    ],
                          capture_output=True,
                          text=True,
                          timeout=600,
                          env=env,
                          cwd=ROOT)


def test_a_test_run_writes_counts_and_the_fault_matrix(tmp_path):
    target = 'tests/test_configs/test_metafiles.py'
    out = _pytest(tmp_path, target, '-k', 'readme or configs_folder')
    assert out.returncode == 0, out.stdout[-3000:]
    tests = read_results('tests', str(tmp_path))
    data = tests['data']
    assert data['passed'] >= 1 and data['failed'] == 0
    assert data['deselected'] >= 1
    assert data['passed'] + data['skipped'] == data['collected']
    assert data['markexpr'] == 'not slow' and target in data['args']
    assert tests['meta']['command'].startswith('pytest -q')
    assert f'| {data["passed"]} | 0 | 0 |' in _render('tests', tests)

    matrix = read_results('fault_matrix', str(tmp_path))
    assert matrix['data']['cells'] == []  # none in that file
    assert 'demo' in matrix['data']['entries']


def test_the_collection_alone_writes_the_fault_matrix(tmp_path):
    target = 'projects/demo/tests/test_pretraining.py'
    out = _pytest(tmp_path, '--collect-only', target)
    assert out.returncode == 0, out.stdout[-3000:]
    assert not osp.exists(tmp_path / 'tests.json')  # nothing ran
    matrix = read_results('fault_matrix', str(tmp_path))
    cells = matrix['data']['cells']
    assert {(c['entry'], c['fault']) for c in cells} == {('demo', 'signal')}
    table = _render('fault_matrix', matrix)
    assert table.splitlines()[2].startswith(
        '| `make demo` (`projects/demo/tools/demo.py`) | a signal or kill')
    assert cells[0]['test'] in table


def test_no_results_file_without_the_environment_variable(tmp_path):
    env = dict(ENV, MMSIAMESEIM_RESULTS_DIR=str(tmp_path))
    env.pop('MMSIAMESEIM_RESULTS', None)
    out = subprocess.run([
        sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
        '--collect-only', 'tests/test_configs/test_metafiles.py'
    ],
                         capture_output=True,
                         text=True,
                         timeout=300,
                         env=env,
                         cwd=ROOT)
    assert out.returncode == 0
    assert os.listdir(tmp_path) == []


def test_results_file_is_json_with_meta_and_data(tmp_path):
    from projects.common.results import write_results
    path = write_results(
        'x', dict(a=1), command='cmd', results_dir=str(tmp_path))
    with open(path) as f:
        results = json.load(f)
    assert set(results) == {'meta', 'data'} and results['data'] == dict(a=1)
    assert results['meta']['command'] == 'cmd'
    with pytest.raises(FileNotFoundError, match='no results file .*y.json'):
        read_results('y', str(tmp_path))
