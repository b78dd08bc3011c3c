"""The accumulation study's table, from synthetic format-2 records.

The floors beside the settings, each setting against batch 64 under Holm's
correction, each setting's gain over its initial weights, and the first format
refused by name (projects/accumulation/results/accumulation_study.json).
"""
import pytest

from projects.accumulation.tables import (accumulation_study_table,
                                          setting_comparisons)
from projects.claim.data import FORMAT
from projects.claim.statistics import ALPHA
from projects.claim.verdicts import summary, table_comparisons
from projects.common.metrics import METRICS

METHODS = ['siameseim', 'siameseim-microbatch4', 'siameseim-accum4']
FLOORS = dict(
    raw=dict(knn=60.0, linear=61.0, fewshot=62.0, dim=784),
    projection=dict(knn=59.0, fewshot=58.0, dim=8192),
    dense=dict(miou=10.0, accuracy=50.0))


def _results(shift=None, initial=None):
    """Three seeds a setting; ``shift``: method -> added to its kNN;
    ``initial``: method -> its initial weights' scores (default 50)."""
    shift, initial = shift or {}, initial or {}
    records = []
    for m in METHODS:
        for seed in (0, 1, 2):
            scores = {k: 70.0 + 0.3 * seed for k in METRICS}
            scores['knn'] += shift.get(m, 0.0)
            records.append(
                dict(
                    method=m,
                    seed=seed,
                    kind='table',
                    pretrain_wall_s=100.0,
                    initial_weights={
                        k: initial.get(m, 50.0) + 0.1 * seed
                        for k in METRICS
                    },
                    **scores))
    return dict(
        meta=dict(command='projects/claim/tools/claim_study.py'),
        data=dict(
            format=FORMAT,
            methods=METHODS,
            seeds=[0, 1, 2],
            records=records,
            summary=summary(records, METHODS),
            pixel_floors=FLOORS,
            native_bf16=True,
            statistics=dict(
                alpha=ALPHA, table=table_comparisons(records, METHODS,
                                                     FLOORS))))


def test_each_setting_is_compared_with_batch_64_under_holm():
    data = _results(shift={'siameseim-accum4': 5.0})['data']
    out = setting_comparisons(data)
    # two settings x four scores, one family
    assert len(out) == 8
    assert {c['method'] for c in out} == set(METHODS[1:])
    knn = {c['method']: c for c in out if c['metric'] == 'knn'}
    # the same seeds' scores shifted by 5: Welch finds it, Holm keeps it
    assert knn['siameseim-accum4']['diff'] == pytest.approx(5.0)
    assert knn['siameseim-accum4']['verdict'] == 'differs'
    assert knn['siameseim-accum4']['p_holm'] >= knn['siameseim-accum4']['p']
    # the same scores: no difference, so undecided (no direction expected)
    assert knn['siameseim-microbatch4']['verdict'] == 'undecided'
    assert all(c['verdict'] in ('differs', 'undecided') for c in out)


def test_the_table_stands_beside_its_floors_and_reads_its_tests():
    text = accumulation_study_table(_results(shift={'siameseim-accum4': 5.0}))
    lines = text.splitlines()
    # one initial-weights row (every setting starts from the same weights)
    floor = [x for x in lines if x.startswith('| initial weights')]
    assert len(floor) == 1 and '50.10 ± 0.10 (50.00-50.20)' in floor[0]
    pixels = [x for x in lines if x.startswith('| raw pixels (784 values)')]
    assert pixels == [
        '| raw pixels (784 values) | - | 60.00 | 61.00 | '
        '62.00 | 10.00 | - |'
    ]
    assert '(with native bf16)' in text
    accum = [
        x for x in lines
        if x.startswith('* 4 x 16, plain') and 'against batch 64' in x
    ][0]
    assert accum.startswith('* 4 x 16, plain (`accumulative_counts=4`) '
                            'against batch 64: differs on kNN top-1 +5.00')
    exact = [
        x for x in lines
        if x.startswith('* 4 x 16, exact') and 'against batch 64' in x
    ][0]
    assert 'no difference the corrected test finds' in exact
    assert 'kNN top-1 +0.00' in exact  # never -0.00
    gains = [
        x for x in lines
        if x.startswith('* ') and 'over its initial weights' in x
    ]
    assert len(gains) == 3
    assert all('+20.' in x and 'holds' in x for x in gains)


def test_settings_from_other_weights_get_a_floor_row_each():
    text = accumulation_study_table(
        _results(initial={'siameseim-accum4': 40.0}))
    rows = [x for x in text.splitlines() if 'initial weights |' in x]
    assert [x.split(' |')[0] for x in rows] == [
        '| batch 64 (the demo): initial weights',
        '| 4 x 16, exact (`model.micro_batches=4`): initial weights',
        '| 4 x 16, plain (`accumulative_counts=4`): initial weights'
    ]


def test_a_first_format_file_is_refused_by_name():
    results = _results()
    del results['data']['format']
    with pytest.raises(ValueError, match='format 1.*only format 2'):
        accumulation_study_table(results)
