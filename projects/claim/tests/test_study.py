"""Each method's summary over its seeds and the renderers' refusal of a
results file of the study's first format (synthetic records; the format-2
tables are in test_tables.py)."""
import pytest

from projects.claim import summary
from projects.claim.tables import (claim_search, claim_setup, claim_summary,
                                   claim_table)
from projects.common.metrics import METRICS


def _record(method, seed, kind='table', base=70.0):
    rec = dict(
        key=f'{method}_seed{seed}_1e',
        method=method,
        seed=seed,
        epochs=1,
        kind=kind,
        **{m: base + seed
           for m in METRICS})
    if kind == 'table':
        rec['initial_weights'] = {m: 50.0 for m in METRICS}
    return rec


def test_summary_is_over_the_table_runs_with_their_initial_weights():
    records = [_record('siameseim', s) for s in (0, 1, 2)]
    records += [_record('siameseim', 5, kind='curve', base=99.0)]
    records += [_record('mae', 0)]
    out = summary(records, ['siameseim', 'mae', 'mocov3'])
    assert set(out) == {'siameseim', 'mae'}  # no mocov3 run, no entry
    knn = out['siameseim']['scores']['knn']
    assert out['siameseim']['seeds'] == [0, 1, 2]
    assert (knn['mean'], knn['sd'], knn['min'], knn['max'], knn['n']) == \
        (71.0, 1.0, 70.0, 72.0, 3)
    assert out['siameseim']['initial_weights']['knn']['mean'] == 50.0
    # one seed: no spread
    assert out['mae']['scores']['knn']['sd'] is None


@pytest.mark.parametrize(
    'render', [claim_summary, claim_table, claim_setup, claim_search])
def test_a_first_format_results_file_is_refused_by_name(render):
    records = [_record('siameseim', s) for s in (0, 1)]
    results = dict(
        meta=dict(command='tools/claim_study.py'),
        data=dict(
            methods=['siameseim'],
            seeds=[0, 1],
            epochs=1,
            records=records,
            summary=summary(records, ['siameseim']),
            raw_pixels=dict(knn=84.2, dense_miou=20.5),
            protocol=[]))
    with pytest.raises(
            ValueError,
            match=r'format 1 \(from '
            r"'tools/claim_study.py'\): only format 2"):
        render(results)
