"""The claim study's plan, its continuation from a results file, the
paper's orderings with their verdicts, the rendered table and the charts
(synthetic records; the end-to-end smoke run is in tests/test_tools)."""
import copy
import os

import pytest
from mmengine.config import Config

from mmsiameseim_lab.claim import (check_study, orderings, pending,
                                   planned_runs, plot_claim, record_key,
                                   reusable_records, summary, welch_threshold)
from mmsiameseim_lab.claim.tables import claim_table
from mmsiameseim_lab.metrics import METRICS
from tests.helpers import ROOT

STUDY = os.path.join(ROOT, 'configs', 'demo', 'claim_study.py')


def _study(**changes):
    study = Config.fromfile(STUDY)
    study.merge_from_dict(changes)
    return study


def test_plan_runs_each_seed_of_every_method_then_one_curve_run_each():
    runs = planned_runs(_study())
    table = [(r['method'], r['seed']) for r in runs if r['table']]
    assert table == [(m, s) for s in (0, 1, 2)
                     for m in ('siameseim', 'mae', 'mocov3')]
    assert all(r['epochs'] == 1 and r['evaluate_at'] == [1] for r in runs
               if r['table'])
    curve = [r for r in runs if not r['table']]
    assert [(r['method'], r['epochs'], r['evaluate_at'])
            for r in curve] == [('siameseim', 16, [1, 2, 4, 8, 16]),
                                ('mae', 16, [1, 4, 16]),
                                ('mocov3', 16, [1, 4, 16])]
    assert all(r['seed'] == 0 for r in curve)
    assert record_key(curve[0], 4) == 'siameseim_seed0_16e@4'
    done = {'siameseim_seed0_16e@1', 'siameseim_seed0_16e@2'}
    assert pending(curve[0], done) == [4, 8, 16]


def test_study_refuses_unknown_methods_and_epochs():
    with pytest.raises(ValueError, match=r"unknown methods \['byol'\]"):
        check_study(_study(methods=['siameseim', 'byol']))
    with pytest.raises(ValueError, match=r"curve names \['mae', 'mocov3'\]"):
        check_study(_study(methods=['siameseim']))
    with pytest.raises(ValueError, match='whole numbers >= 1'):
        check_study(_study(curve=dict(siameseim=[0.5, 2])))


def _record(method, seed, table=True, epochs=1, base=70.0):
    scores = {m: base + seed for m in METRICS}
    rec = dict(
        key=f'{method}_seed{seed}_{epochs}e',
        method=method,
        seed=seed,
        epochs=epochs,
        table=table,
        curve=not table,
        **scores)
    if table:
        rec['initial_weights'] = {m: 50.0 for m in METRICS}
    return rec


def test_verdicts_need_two_standard_errors_and_the_paper_sign():
    records = [_record('siameseim', s, base=80.0) for s in (0, 1, 2)]
    records += [_record('mocov3', s, base=70.0) for s in (0, 1, 2)]
    records += [_record('mae', s, base=79.5) for s in (0, 1, 2)]
    out = {
        (o['metric'], o['a'], o['b']): o
        for o in orderings(summary(records, ['siameseim', 'mae', 'mocov3']))
    }
    # +10 with a standard error of 0.82: holds (the paper: +1.3)
    lin = out[('linear', 'siameseim', 'mocov3')]
    assert lin['verdict'] == 'holds' and lin['ours'] == pytest.approx(10)
    assert lin['se'] == pytest.approx((2 * 1.0 / 3)**0.5)
    # the 95 % Welch threshold at 4 degrees of freedom: t 2.776 x 0.816
    one = dict(mean=0., sd=1., n=3)
    assert welch_threshold(one, one) == pytest.approx(
        2.776 * (2 / 3)**0.5, rel=1e-3)
    # +0.5 is inside it
    assert out[('linear', 'siameseim', 'mae')]['verdict'] == \
        'within the seed spread'
    # the paper has MAE above MoCo-v3 on ADE20k and MoCo-v3 above MAE on
    # LIN; ours has MAE above on both
    assert out[('dense_miou', 'mocov3', 'mae')]['verdict'] == 'holds'
    assert out[('linear', 'mocov3', 'mae')]['verdict'] == 'reversed'
    one = summary(
        [_record('siameseim', 0), _record('mae', 0)], ['siameseim', 'mae'])
    assert {o['verdict'] for o in orderings(one)} == {'one seed'}


def _results(records, smoke=False):
    methods = ['siameseim', 'mae', 'mocov3']
    return dict(
        meta={},
        data=dict(
            methods=methods,
            seeds=[0, 1, 2],
            epochs=1,
            curve=dict(siameseim=[1, 4]),
            curve_seed=0,
            records=records,
            summary=summary(records, methods),
            raw_pixels=dict(knn=84.2, dense_miou=20.5, dense_accuracy=57.8),
            protocol=[],
            pretraining={},
            native_bf16=True,
            settings=dict(a=1),
            smoke=smoke,
            holdout=None))


def test_table_renders_means_floors_orderings_and_the_curve(tmp_path):
    records = [_record(m, s) for s in (0, 1) for m in ('siameseim', 'mae')]
    records += [
        _record('siameseim', 0, table=False, epochs=e, base=70 + e)
        for e in (1, 4)
    ]
    text = claim_table(_results(records))
    assert '| **siameseim** | 0,1 | 70.50 ± 0.71 (70.00-71.00) |' in text
    assert '| siameseim initial weights | 0,1 | 50.00 ± 0.00' in text
    assert '| raw pixels | - | 84.20 | - | - | 20.50 | 57.80 |' in text
    assert '| LIN | siameseim - mae | +10.0 | +0.00 ± 0.71 | within' in text
    assert '| siameseim | 71.00 / 71.00 | 74.00 / 74.00 |' in text
    assert 'mocov3' not in text.split('| paper column')[0]
    assert 'Learning curve, on the pooled feature of the table: SiameseIM\'s' \
        ' kNN stays below raw pixels up to epoch 4' in text
    assert 'Smoke run' in claim_table(_results(records, smoke=True))
    paths = plot_claim(_results(records)['data'], str(tmp_path))
    for path in paths:
        assert os.path.getsize(path) > 10_000


def test_records_are_reused_only_under_the_same_settings():
    stored = _results([_record('siameseim', 0)])
    assert len(reusable_records(stored, dict(a=1))) == 1
    assert reusable_records(stored, dict(a=2)) == []
    assert reusable_records(stored, dict(a=1), smoke=True) == []
    assert reusable_records(None, dict(a=1)) == []
    smoke = copy.deepcopy(stored)
    smoke['data']['smoke'] = True
    assert len(reusable_records(smoke, dict(a=1), smoke=True)) == 1


def test_a_curve_under_another_feature_says_where_it_passes_pixels():
    from mmsiameseim_lab.claim.tables import (claim_records_table,
                                              claim_token_map_summary)
    records = [
        _record('siameseim', 0, table=False, epochs=e, base=b)
        for e, b in ((1, 83.0), (2, 85.0), (4, 84.0), (8, 86.0))
    ] + [_record('mae', 0, table=False, epochs=e, base=80.0) for e in (1, 4)]
    results = _results(records)
    results['data']['protocol'] = [
        '* Feature: siameseim: the token map; mae: the token map; mocov3: '
        'the cls token.'
    ]
    text = claim_records_table(results)
    assert '| siameseim_seed0_8e | 8 | 86.00 |' in text
    assert '| raw pixels | - | 84.20 | - | - | 20.50 |' in text
    assert ('siameseim: kNN first passes raw pixels (84.20) at epoch 2 '
            '(85.00); best 86.00 at epoch 8.') in text
    assert 'mae: kNN stays below raw pixels (84.20) at every scored epoch; ' \
        'best 80.00 at epoch 1.' in text
    # the features of the methods shown, not of the others
    assert 'Feature: siameseim: the token map; mae: the token map.' in text
    assert claim_token_map_summary(results).count('\n* ') == 1
