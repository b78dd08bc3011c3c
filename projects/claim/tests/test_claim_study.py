"""projects/claim/tools/claim_study.py end to end on tiny subsets (the full
study is
`python projects/claim/tools/claim_study.py`): every phase runs (search, table,
equal time, curve), the results file and the charts are written after each
run, a rerun continues instead of starting over, and the file renders."""
import json
import os

import pytest

from tests.helpers import ROOT

DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


@pytest.fixture
def run(monkeypatch, capsys):
    # what `python projects/claim/tools/claim_study.py` has on sys.path; main()
    # moves
    # to the repository root, monkeypatch moves back
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'claim', 'tools'))
    monkeypatch.chdir(ROOT)
    import claim_study

    def _run(*argv):
        path = claim_study.main(['--smoke', *argv])
        return path, capsys.readouterr().out

    return _run


@pytest.mark.slow  # 15 (alone) to 34 minutes (beside other jobs) on 2
# cores: each evaluation builds its model and datasets again, and the linear
# probe runs through a Runner (the cached evaluation shortens both)
def test_smoke_study_runs_every_phase_and_continues(tmp_path, run):
    from projects.claim.tables import claim_search, claim_setup, claim_table
    wd = str(tmp_path)
    path, out = run('--work-dir', wd, '--max-runs', '2')
    assert path == os.path.join(wd, 'claim.json')
    assert '--max-runs 2 reached' in out
    data = json.load(open(path))['data']
    assert [r['key'] for r in data['records']] == [
        'siameseim_lr0.0005_wd0.05_seed0_1e@holdout',
        'siameseim_lr0.001_wd0.05_seed0_1e@holdout'
    ]
    assert data['format'] == 2 and data['smoke'] is True
    assert data['pixel_floors']['raw']['dim'] == 784
    assert data['pixel_floors']['projection']['dim'] == 8192
    # the rest; the two recorded runs are not run again
    path, out = run('--work-dir', wd)
    assert 'search: siameseim_lr0.0005' not in out
    data = json.load(open(path))['data']
    kinds = [r['kind'] for r in data['records']]
    assert kinds.count('search') == 4 + 2 * 4  # the grid, then 4 features
    assert kinds.count('table') == 4
    chosen = data['search']['chosen']
    assert set(chosen) == {'siameseim', 'mae'}
    table = [r for r in data['records'] if r['kind'] == 'table']
    for rec in table:
        assert rec['lr'] == chosen[rec['method']]['lr']
        assert rec['features']['pooled'] == chosen[rec['method']]['pooled']
        for key in ('knn', 'linear', 'fewshot', 'dense_miou', 'token_map_knn',
                    'token_map_fewshot'):
            assert 0 <= rec[key] <= 100
            assert 0 <= rec['initial_weights'][key] <= 100
        assert len(rec['commit']) == 40
    curve = [r for r in data['records'] if r['kind'] == 'curve']
    assert sorted((r['seed'], r['epochs']) for r in curve) == \
        [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2)]
    stats = data['statistics']
    assert {c['kind'] for c in stats['table']} == \
        {'ordering', 'gain', 'pixels'}
    assert all(c['verdict'] in ('holds', 'reversed', 'undecided')
               for c in stats['table'] + stats['curve'])
    results = json.load(open(path))
    assert 'Holm-adjusted p' in claim_table(results)
    assert '* siameseim: lr ' in claim_setup(results)
    assert '| mae |' in claim_search(results)
    for fig in ('claim_table.png', 'learning_curve.png'):
        assert os.path.getsize(os.path.join(wd, 'figures', fig)) > 10_000
    _, out = run('--work-dir', wd)
    assert 'nothing to run' in out


def test_a_phase_alone_needs_the_earlier_ones(tmp_path, run):
    with pytest.raises(ValueError, match='--only table needs the earlier'):
        run('--work-dir', str(tmp_path), '--only', 'table')
