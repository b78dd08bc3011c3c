"""The tables of the README, the docs and the config READMEs are rendered from
results files and metafiles (tools/render_results.py): the repository agrees
with its sources, and a planted disagreement, a missing results file, an
unknown name or a figure not retaken after a change is caught."""
import json
import os
import os.path as osp
import shutil
import subprocess
import sys

import pytest

from mmsiameseim_lab import results as results_mod
from mmsiameseim_lab.docs_render import (changed_since, check, footer,
                                         formatting_commits, load_renderers,
                                         markdown_files, render)
from mmsiameseim_lab.results import table_renderers, write_results
from tests.helpers import ROOT


def _git(*args):
    return subprocess.run(['git', '-C', ROOT, *args],
                          check=True,
                          capture_output=True,
                          text=True).stdout.strip()


def _copy(tmp_path):
    """The repository's markdown, metafiles and results files in tmp."""
    root = tmp_path / 'repo'
    root.mkdir()
    shutil.copy(osp.join(ROOT, 'README.md'), root / 'README.md')
    for folder in ('docs', 'configs'):
        shutil.copytree(
            osp.join(ROOT, folder),
            root / folder,
            ignore=shutil.ignore_patterns('_build'))
    (root / 'docs' / 'results').mkdir(exist_ok=True)
    return root


def _append(path, text):
    with open(path, 'a') as f:
        f.write(text)


@pytest.fixture
def probe_renderer(monkeypatch):
    """A renderer 'probe' depending on tools/demo.py, for these tests."""
    load_renderers()
    monkeypatch.setitem(results_mod._TABLES, 'probe',
                        lambda r: f'| value |\n|---|\n| {r["data"]["v"]} |')
    monkeypatch.setitem(results_mod._DEPENDS, 'probe', ('tools/demo.py', ))


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
    if (root / 'docs' / 'results' / 'benchmark_attention.json').exists():
        os.remove(root / 'docs' / 'results' / 'benchmark_attention.json')

    problems = check(str(root))
    text = '\n'.join(problems)
    assert 'configs/pretrain/README.md: <!-- results:probe --> differs' in text
    assert ('configs/demo/README.md: <!-- results:benchmark_attention -->: '
            'no results file docs/results/benchmark_attention.json') in text
    assert 'docs/page.md: <!-- results:nonesuch -->: unknown results name ' \
        "'nonesuch'" in text
    assert 'configs/pretrain/mix/README.md: <!-- metafile:configs/pretrain/' \
        'mix/metafile.yml --> differs' in text
    assert 'docs/page.md: <!-- results:probe --> has no closing marker' \
        in text
    out = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'render_results.py'), '--check', '--root',
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
    root = _copy(tmp_path)
    rdir = str(root / 'docs' / 'results')
    page = root / 'docs' / 'page.md'
    page.write_text('<!-- results:probe -->\n<!-- /results:probe -->\n')
    path = write_results(
        'probe', dict(v=3), command='python probe.py', results_dir=rdir)
    render(str(root))
    text = page.read_text()
    head = _git('rev-parse', 'HEAD')
    assert 'From [docs/results/probe.json](results/probe.json): ' in text
    assert f'commit {head[:7]}' in text and '`python probe.py`' in text
    assert 'Not retaken' not in text

    # the same figures, taken before tools/demo.py last changed (formatting
    # only commits, listed in .git-blame-ignore-revs, change nothing)
    formatting = formatting_commits()
    last = next(
        c for c in _git('log', '--format=%H', '--', 'tools/demo.py').split()
        if c not in formatting)
    before = _git('rev-parse', f'{last}^')
    with open(path) as f:
        results = json.load(f)
    results['meta']['commit'] = before
    with open(path, 'w') as f:
        json.dump(results, f)
    assert check(str(root))  # the footer now differs
    render(str(root))
    assert f'**Not retaken since {before[:7]}: tools/demo.py changed.**' \
        in page.read_text()
    assert changed_since(before, ['tools/demo.py', 'setup.py']) in ([
        'tools/demo.py'
    ], ['tools/demo.py', 'setup.py'])

    results['meta']['commit'] = '0' * 40  # not in this history
    with open(path, 'w') as f:
        json.dump(results, f)
    render(str(root))
    assert 'Commit 0000000 is not in this history' in page.read_text()


def _commit(repo, message):
    """Commit everything in ``repo``; its hash."""

    def git(*args):
        cmd = [
            'git', '-C',
            str(repo), '-c', 'user.name=test', '-c',
            'user.email=test@example.com', '-c', 'commit.gpgsign=false'
        ]
        return subprocess.run(
            cmd + list(args), check=True, capture_output=True,
            text=True).stdout.strip()

    git('add', '-A')
    git('commit', '-q', '-m', message)
    return git('rev-parse', 'HEAD')


def test_a_formatting_only_commit_does_not_mark_figures_stale(
        tmp_path, probe_renderer):
    """A commit listed in .git-blame-ignore-revs (formatting only) is no
    change of the files the figures depend on; any other commit is."""
    repo = tmp_path / 'repo'
    (repo / 'tools').mkdir(parents=True)
    subprocess.run(['git', 'init', '-q', str(repo)], check=True)
    (repo / 'tools' / 'demo.py').write_text('x = [1,2]\n')
    (repo / 'setup.py').write_text('y = 1\n')
    taken = _commit(repo, 'the figures are taken here')
    results = dict(
        data=dict(v=3),
        meta=dict(
            commit=taken,
            date='2026-01-01T00:00',
            machine='m',
            command='python probe.py'))

    def stale():
        return changed_since(taken, ['tools/demo.py', 'setup.py'], str(repo))

    def text():
        return footer('probe', results, str(repo / 'README.md'), str(repo),
                      str(repo / 'docs' / 'results'), str(repo))

    (repo / 'tools' / 'demo.py').write_text('x = [1, 2]\n')
    formatting = _commit(repo, 'formatting only')
    assert stale() == ['tools/demo.py']  # not listed yet: a change
    assert f'Not retaken since {taken[:7]}: tools/demo.py changed' in text()

    ignore_revs = repo / '.git-blame-ignore-revs'
    ignore_revs.write_text(f'# formatting only\n\n{formatting}  # yapf\n')
    _commit(repo, 'list the formatting commit')
    assert stale() == []
    assert 'Not retaken' not in text()

    (repo / 'tools' / 'demo.py').write_text('x = [1, 3]\n')
    _commit(repo, 'a code change')
    assert stale() == ['tools/demo.py']
    assert f'Not retaken since {taken[:7]}: tools/demo.py changed' in text()


def test_a_rendered_readme_inside_a_dependency_does_not_mark_it_stale(
        tmp_path):
    """Rendering a table into the README of a folder its figures depend on
    (configs/pretrain/ablations/README.md) is no change of their inputs; a
    config there is."""
    repo = tmp_path / 'repo'
    (repo / 'configs').mkdir(parents=True)
    subprocess.run(['git', 'init', '-q', str(repo)], check=True)
    (repo / 'configs' / 'row.py').write_text('a = 1\n')
    taken = _commit(repo, 'the figures are taken here')
    (repo / 'configs' / 'README.md').write_text('| table |\n')
    _commit(repo, 'the table rendered into the folder README')
    assert changed_since(taken, ['configs'], str(repo)) == []
    (repo / 'configs' / 'row.py').write_text('a = 2\n')
    _commit(repo, 'a config change')
    assert changed_since(taken, ['configs'], str(repo)) == ['configs']


def test_every_renderer_is_registered_with_its_dependencies():
    load_renderers()
    names = set(table_renderers())
    for name in ('demo', 'side_by_side', 'table3', 'benchmark_pretrain',
                 'benchmark_unigrad', 'benchmark_attention', 'tests',
                 'fault_matrix', 'person_matrix'):
        assert name in names
        deps = results_mod.table_depends_on(name)
        assert deps, name
        for dep in deps:
            assert osp.exists(osp.join(ROOT, dep)), (name, dep)
