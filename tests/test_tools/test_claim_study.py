"""tools/studies/claim_study.py end to end on tiny subsets (the full study is
`python tools/studies/claim_study.py`): every stage runs, the results file and
the charts are written after each run, a rerun continues instead of starting
over, and held-out scoring keeps away from the test images."""
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
    # what `python tools/studies/claim_study.py` has on sys.path; main() moves
    # to the repository root, monkeypatch moves back
    monkeypatch.syspath_prepend(os.path.join(ROOT, 'tools', 'studies'))
    monkeypatch.chdir(ROOT)
    import claim_study

    def _run(*argv):
        path = claim_study.main(['--smoke', *argv])
        return path, capsys.readouterr().out

    return _run


def test_smoke_study_records_every_run_and_continues(tmp_path, run):
    wd = str(tmp_path)
    path, out = run('--work-dir', wd, '--max-runs', '2')
    assert path == os.path.join(wd, 'claim.json')
    assert '--max-runs 2 reached' in out
    data = json.load(open(path))['data']
    assert [r['key'] for r in data['records']] == \
        ['siameseim_seed0_1e', 'mae_seed0_1e']
    rec = data['records'][0]
    for key in ('knn', 'linear', 'fewshot', 'dense_miou', 'dense_accuracy'):
        assert 0 <= rec[key] <= 100 and 0 <= rec['initial_weights'][key] <= 100
    assert len(rec['dense_iou']) == 11 and data['smoke'] is True
    assert len(rec['commit']) == 40  # what code made this record
    assert data['raw_pixels']['knn'] > 0
    assert any('Dense probe' in line for line in data['protocol'])
    assert any('siameseim: the mean of the last block' in line
               for line in data['protocol'])
    # the rest; the two recorded runs are not run again
    path, out = run('--work-dir', wd)
    assert 'pretraining already finished' not in out
    assert 'run 1/5' not in out and 'run 3/5' in out
    data = json.load(open(path))['data']
    curve = [r for r in data['records'] if r['curve']]
    assert [(r['key'], r['epochs'])
            for r in curve] == [('siameseim_seed0_2e@1', 1),
                                ('siameseim_seed0_2e@2', 2)]
    assert all(r['linear'] is None and r['schedule_epochs'] == 2
               for r in curve)
    assert data['summary']['siameseim']['scores']['knn']['n'] == 2
    for fig in ('claim_table.png', 'learning_curve.png'):
        assert os.path.getsize(os.path.join(wd, 'figures', fig)) > 10_000
    _, out = run('--work-dir', wd)
    assert 'nothing to run' in out


def test_holdout_scores_are_kept_apart(tmp_path, run):
    wd = str(tmp_path)
    path, _ = run('--work-dir', wd, '--holdout', '300', '--only', 'curve')
    assert path == os.path.join(wd, 'claim_holdout.json')
    data = json.load(open(path))['data']
    assert data['holdout'] == 300
    assert {r['key'] for r in data['records']} == \
        {'siameseim_seed0_2e@1', 'siameseim_seed0_2e@2'}
    assert os.path.isdir(os.path.join(wd, 'holdout300', 'results'))
    assert any('300 held-out training images' in line
               for line in data['protocol'])


def test_curve_under_the_token_map_keeps_its_evaluations_apart(tmp_path, run):
    wd = str(tmp_path)
    # the table's linear probe cannot read the token map: refused by name
    with pytest.raises(ValueError, match=r'features\.siameseim'):
        run('--work-dir', wd, '--cfg-options', 'features.siameseim=featmap')
    path, _ = run('--work-dir', wd, '--only', 'curve', '--results-name',
                  'token_map', '--cfg-options', 'features.siameseim=featmap')
    assert path == os.path.join(wd, 'token_map.json')
    data = json.load(open(path))['data']
    assert [r['key'] for r in data['records']] == \
        ['siameseim_seed0_2e@1', 'siameseim_seed0_2e@2']
    assert all(0 <= r['knn'] <= 100 for r in data['records'])
    assert any('siameseim: the last block\'s patch tokens, flattened' in line
               for line in data['protocol'])
    stored = json.load(
        open(
            os.path.join(wd, 'token_map', 'results',
                         'siameseim_seed0_2e@1.json')))
    assert stored['settings']['feature'] == 'featmap'
    assert not os.path.exists(os.path.join(wd, 'results'))
    # its charts beside the others, not over them
    assert os.path.isfile(
        os.path.join(wd, 'figures', 'token_map', 'learning_curve.png'))
    assert not os.path.exists(os.path.join(wd, 'figures', 'claim_table.png'))
