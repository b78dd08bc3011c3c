"""projects.common.results: the provenance a results file records."""
import subprocess

from projects.common import results


def test_dirty_paths_are_whole_paths(tmp_path, monkeypatch):
    """`git status --porcelain` starts a modified file's line with a space;
    the first path must keep its first character."""
    repo = tmp_path / 'repo'
    (repo / 'docs').mkdir(parents=True)
    git = ['git', '-C', str(repo), '-c', 'user.name=t', '-c', 'user.email=t@t']
    subprocess.run(['git', 'init', '-q', str(repo)], check=True)
    (repo / 'docs' / 'a.json').write_text('1')
    (repo / 'b.py').write_text('1')
    subprocess.run(git + ['add', '-A'], check=True)
    subprocess.run(git + ['commit', '-qm', 'x'], check=True)
    monkeypatch.setattr(results, 'REPO', str(repo))
    assert results.run_meta('cmd')['dirty'] is False
    (repo / 'docs' / 'a.json').write_text('2')
    (repo / 'b.py').write_text('2')
    meta = results.run_meta('cmd')
    assert meta['dirty'] is True
    assert meta['dirty_paths'] == ['b.py', 'docs/a.json']
    assert len(meta['commit']) == 40


def test_every_results_file_records_its_host():
    from projects.common.results import run_meta
    host = run_meta('x')['host']
    assert set(host) >= {'cpu', 'cpu_family', 'cpu_model', 'cores'}
    assert host['cores'] >= 1 and host['cpu']
    assert isinstance(host['native_bf16'], bool)
    assert host['torch'].startswith('2.')
