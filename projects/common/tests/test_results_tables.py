"""The tables of the README, the docs, the config and project READMEs are
rendered from results files and metafiles
(projects/common/tools/render_results.py): the repository agrees with its
sources, and a planted disagreement, a missing results file, an
unknown name is caught, and a study's block says it was not retaken only when
its smoke fingerprint says so."""
import json
import os
import os.path as osp
import shutil
import subprocess
import sys

import pytest

from projects.common import fingerprints
from projects.common import results as results_mod
from projects.common.docs_render import (check, footer, load_renderers,
                                         markdown_files, render)
from projects.common.results import table_renderers, write_results
from tests.helpers import ROOT


def _git(*args):
    return subprocess.run(['git', '-C', ROOT, *args],
                          check=True,
                          capture_output=True,
                          text=True).stdout.strip()


def _copy(tmp_path):
    """The repository's markdown (the projects' READMEs aside), metafiles
    and results files in tmp."""
    root = tmp_path / 'repo'
    root.mkdir()
    shutil.copy(osp.join(ROOT, 'README.md'), root / 'README.md')
    for folder in ('docs', 'configs'):
        shutil.copytree(
            osp.join(ROOT, folder),
            root / folder,
            ignore=shutil.ignore_patterns('_build'))
    for home in set(results_mod.RESULTS_HOMES.values()):
        if home != 'docs/results' and osp.isdir(osp.join(ROOT, home)):
            shutil.copytree(osp.join(ROOT, home), root / home)
    (root / 'docs' / 'results').mkdir(exist_ok=True)
    return root


def _append(path, text):
    with open(path, 'a') as f:
        f.write(text)


@pytest.fixture
def probe_renderer(monkeypatch):
    """A renderer 'probe', a study's, for these tests."""
    load_renderers()
    monkeypatch.setitem(results_mod._TABLES, 'probe',
                        lambda r: f'| value |\n|---|\n| {r["data"]["v"]} |')
    monkeypatch.setitem(fingerprints.STUDIES, 'probe', ('probe_smoke', ))
    monkeypatch.setitem(results_mod.RESULTS_HOMES, 'probe', 'docs/results')


def test_every_block_of_the_repository_agrees_with_its_source():
    problems = check(ROOT)
    assert problems == [], '\n'.join(problems)


def test_the_repository_has_rendered_blocks():
    texts = [open(f).read() for f in markdown_files(ROOT)]
    assert any('<!-- metafile:configs/' in t for t in texts)
    assert any('<!-- results:' in t for t in texts)


def test_planted_disagreements_are_each_listed(tmp_path, probe_renderer):
    root = _copy(tmp_path)
    readme = root / 'configs' / 'pretrain' / 'README.md'
    write_results(
        'probe', dict(v=1), results_dir=str(root / 'docs' / 'results'))
    _append(readme, '\n<!-- results:probe -->\n<!-- /results:probe -->\n')
    render(str(root))
    assert not [p for p in check(str(root)) if 'probe' in p]
    text = readme.read_text()
    assert '| 1 |' in text

    # 1. a number edited by hand inside a rendered block
    readme.write_text(text.replace('| 1 |', '| 2 |'))
    # 2. a block whose results file is missing
    _append(
        root / 'configs' / 'demo' / 'README.md',
        '\n<!-- results:benchmark_attention -->\n'
        '<!-- /results:benchmark_attention -->\n')
    # 3. a block naming no registered renderer
    _append(
        root / 'docs' / 'page.md',
        '# page\n\n<!-- results:nonesuch -->\n<!-- /results:nonesuch -->\n')
    # 4. a hand-edited model-zoo table
    zoo = root / 'configs' / 'pretrain' / 'mix' / 'README.md'
    zoo.write_text(zoo.read_text().replace('| not in the paper', '| Tab. 9'))
    # 5. an opening marker without its closing one
    _append(root / 'docs' / 'page.md', '\n<!-- results:probe -->\n')
    attention = root / 'projects' / 'speed' / 'results' / \
        'benchmark_attention.json'
    if attention.exists():
        os.remove(attention)

    problems = check(str(root))
    text = '\n'.join(problems)
    assert 'configs/pretrain/README.md: <!-- results:probe --> differs' in text
    assert ('configs/demo/README.md: <!-- results:benchmark_attention -->: '
            'no results file projects/speed/results/benchmark_attention.json'
            ) in text
    assert 'docs/page.md: <!-- results:nonesuch -->: unknown results name ' \
        "'nonesuch'" in text
    assert 'configs/pretrain/mix/README.md: <!-- metafile:configs/pretrain/' \
        'mix/metafile.yml --> differs' in text
    assert 'docs/page.md: <!-- results:probe --> has no closing marker' \
        in text
    out = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'projects', 'common', 'tools', 'render_results.py'),
        '--check', '--root',
        str(root)
    ],
                         capture_output=True,
                         text=True,
                         cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 1, out.stderr[-2000:]
    for line in problems:  # the command line has no 'probe' renderer
        if 'probe' not in line:
            assert line in out.stdout
    # --check wrote nothing
    assert '| 2 |' in readme.read_text()


def test_footer_names_the_source_and_says_when_not_retaken(
        tmp_path, probe_renderer):
    """A study's block: a banner when no fingerprint is recorded for its
    results or the recorded one notes a change; none when it is current."""
    root = _copy(tmp_path)
    rdir = str(root / 'docs' / 'results')
    page = root / 'docs' / 'page.md'
    page.write_text('<!-- results:probe -->\n<!-- /results:probe -->\n')
    path = write_results(
        'probe', dict(v=3), command='python probe.py', results_dir=rdir)
    render(str(root))
    head = _git('rev-parse', 'HEAD')
    text = page.read_text()
    assert 'From [docs/results/probe.json](results/probe.json): ' in text
    assert f'commit {head[:7]}' in text and '`python probe.py`' in text
    assert '**No smoke fingerprint recorded for these results: they may ' \
        'be stale.**' in text

    smoke = dict(probe_smoke=dict(scores={'v': 3}, losses={}))
    fingerprints.record('probe', smoke, root=str(root))
    assert check(str(root))  # the footer now differs
    render(str(root))
    assert '**' not in page.read_text()  # current: no banner

    fingerprints.record(
        'probe', smoke, changed='the loss changed', root=str(root))
    render(str(root))
    assert f'**Not retaken since {head[:7]}: the loss changed.**' in \
        page.read_text()

    # retaken at another commit, the fingerprint not recorded with them
    with open(path) as f:
        results = json.load(f)
    results['meta']['commit'] = '0' * 40
    with open(path, 'w') as f:
        json.dump(results, f)
    render(str(root))
    assert 'No smoke fingerprint recorded for these results' in \
        page.read_text()


def test_a_measurement_or_a_test_run_gets_no_banner(tmp_path):
    """Timings are a measurement of their commit on their machine, whatever
    changed since; the footer says which."""
    results = dict(
        data={},
        meta=dict(
            commit='0' * 40,
            date='2026-01-01T00:00',
            machine='a CPU, 2 cores',
            command='python projects/speed/tools/unigrad.py'))
    for name, home in (('benchmark_unigrad', 'projects/speed/results'),
                       ('tests', 'docs/results')):
        text = footer(name, results, str(tmp_path / 'README.md'),
                      str(tmp_path))
        assert text == (
            f'<sub>From [{home}/{name}.json]({home}/{name}'
            '.json): 2026-01-01 00:00, a CPU, 2 cores, commit 0000000, '
            '`python projects/speed/tools/unigrad.py`.</sub>')


def test_every_renderer_is_registered_with_its_kind():
    """Each rendered results file is a study, a measurement or a test run
    (projects/common/fingerprints.py)."""
    load_renderers()
    names = set(table_renderers())
    for name in ('demo', 'side_by_side', 'table3', 'benchmark_pretrain',
                 'benchmark_unigrad', 'benchmark_attention', 'tests',
                 'fault_matrix', 'person_matrix'):
        assert name in names
    for name in names:
        assert fingerprints.results_kind(name) in ('study', 'measurement',
                                                   'test run'), name
