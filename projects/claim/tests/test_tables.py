"""The claim study's results file (format 2) built from synthetic records by
the study's own code (claim_data), and every renderer of it: the table with
the token map, initial weights, gains and pixel floors, every comparison
with its raw and Holm p, the curve, the setup prose and the search."""
import os

import pytest
from mmengine.config import Config

from projects.claim import plot_claim
from projects.claim.data import claim_data, method_settings
from projects.claim.plan import record_key, search_runs
from projects.claim.statistics import holm
from projects.claim.tables import (claim_search, claim_setup, claim_summary,
                                   claim_table)
from projects.claim.verdicts import CLAIM_METRICS, curve_comparisons
from projects.claim.verdicts import summary as summarise
from tests.helpers import ROOT

SMOKE = os.path.join(ROOT, 'projects', 'claim', 'configs',
                     'claim_study_smoke.py')
FLOORS = dict(
    raw=dict(knn=84.0, linear=80.0, fewshot=70.0, dim=784),
    projection=dict(knn=83.0, linear=81.0, fewshot=69.0, dim=8192, seed=0),
    dense=dict(miou=20.5, accuracy=57.8))


def _scores(base, seed):
    # a spread over the seeds, so that every test has a variance
    return {
        m: base + 0.3 * seed + 0.1 * i
        for i, m in enumerate(CLAIM_METRICS)
    }


def _records(study):
    records = []
    for r in search_runs(study):
        records.append(
            dict(
                key=record_key(r, 1),
                method=r['method'],
                kind='search',
                table=False,
                curve=False,
                lr=r['lr'],
                weight_decay=r['weight_decay'],
                variant=dict(feature='avg_featmap', final_norm=False),
                knn=60.0 + 1000 * r['lr'],
                fewshot=50.0))
    for m in study.methods:
        best = [r for r in search_runs(study) if r['method'] == m][-1]
        for v in list(study.search.pooled) + list(study.search.token_map):
            records.append(
                dict(
                    key=record_key(best, 0, v),
                    method=m,
                    kind='search',
                    table=False,
                    curve=False,
                    lr=best['lr'],
                    weight_decay=best['weight_decay'],
                    variant=dict(v),
                    knn=70.0 + v['final_norm'] + (v['feature'] == 'cls_token'),
                    fewshot=50.0))
    base = dict(siameseim=86.0, mae=82.0)
    for m in study.methods:
        for s in (0, 1, 2):
            records.append(
                dict(
                    key=f'{m}_seed{s}',
                    method=m,
                    seed=s,
                    kind='table',
                    table=True,
                    curve=False,
                    epochs=1,
                    pretrain_wall_s=10.0,
                    initial_weights=_scores(60.0, s),
                    **_scores(base[m], s)))
            if m == 'mae':  # two epochs in siameseim's wall time
                records.append(
                    dict(
                        key=f'mae_time{s}@time',
                        method=m,
                        seed=s,
                        kind='equal_time',
                        table=False,
                        curve=False,
                        epochs=2,
                        machine='host B',
                        pretrain_wall_s=9.0 + s,
                        images_per_s=100.0 + 10 * s,
                        **_scores(base[m] + 1, s)))
            for e in (0, 1, 2):
                records.append(
                    dict(
                        key=f'{m}_curve{s}@{e}',
                        method=m,
                        seed=s,
                        kind='curve',
                        table=False,
                        curve=True,
                        epochs=e,
                        **_scores(base[m] - 2 + e, s)))
    return records


def _results():
    study = Config.fromfile(SMOKE)
    study.merge_from_dict(dict(curve_key_epochs=[2], curve_seeds=[0, 1, 2]))
    methods = {
        m: method_settings(Config.fromfile(os.path.join(ROOT, path)))
        for m, path in study.pretrain_configs.items() if m in study.methods
    }
    data = claim_data(
        study, _records(study), FLOORS, methods, {}, [], {}, smoke=True)
    return dict(meta={}, data=data)


def test_every_comparison_is_tested_and_corrected_in_one_family():
    data = _results()['data']
    table = data['statistics']['table']
    kinds = [c['kind'] for c in table]
    # 3 orderings (LIN, FT 1 %, ADE20k) of the one pair at equal epochs
    # and at equal wall time; 7 gains and 8 pixel comparisons a method
    assert kinds.count('ordering') == 2 * 3
    assert kinds.count('gain') == 2 * 7 and kinds.count('pixels') == 2 * 8
    m = len(table)
    smallest = min(table, key=lambda c: c['p'])
    assert smallest['p_holm'] == pytest.approx(min(1, m * smallest['p']))
    lin, lin_time = (
        c for c in table
        if c['kind'] == 'ordering' and c['metric'] == 'linear')
    # +4 every seed, sd 0 of the difference but not of each side: Welch
    assert lin['diff'] == pytest.approx(4.0) and lin['verdict'] == 'holds'
    # siameseim's table runs against mae's equal-time runs (one better)
    assert lin_time['budget'] == 'equal_time'
    assert lin_time['diff'] == pytest.approx(3.0)
    gain = next(c for c in table if c['kind'] == 'gain')
    assert gain['test'] == 'paired t' and gain['verdict'] == 'holds'
    # siameseim's kNN (86 + 0.3 s) against raw pixels' 84: above, tested
    knn = next(c for c in table if c['kind'] == 'pixels'
               and c['method'] == 'siameseim' and c['metric'] == 'knn')
    assert knn['diff'] == pytest.approx(2.3) and knn['floor_value'] == 84.0
    curve = data['statistics']['curve']
    assert {(c['method'], c['epoch']) for c in curve} == \
        {('siameseim', 2), ('mae', 2)}
    assert all(c['seeds'] == [0, 1, 2] for c in curve)
    # the search's choice: the lr of the best held-out kNN, then the best
    # variant of each kind (cls token over the mean; the norm on the map)
    chosen = data['search']['chosen']['siameseim']
    assert chosen['lr'] == 1e-3
    assert chosen['pooled'] == dict(feature='cls_token', final_norm=False)
    assert chosen['token_map'] == dict(feature='featmap', final_norm=True)
    assert data['dims']['token_map'] == dict(siameseim=8192, mae=8192)


def test_the_curve_is_tested_against_each_runs_own_initial_weights():
    data = _results()['data']
    gains = [
        c for c in data['statistics']['curve'] if c['kind'] == 'curve_gain'
    ]
    # kNN, token-map kNN and dense mIoU at the one key epoch, per method
    assert {(c['method'], c['metric'])
            for c in gains} == {(m, k)
                                for m in ('siameseim', 'mae')
                                for k in ('knn', 'token_map_knn', 'dense_miou')
                                }
    knn = next(c for c in gains
               if c['method'] == 'mae' and c['metric'] == 'knn')
    # the synthetic curve gains one point an epoch, every seed alike
    assert knn['test'] == 'paired t' and knn['seeds'] == [0, 1, 2]
    assert knn['diff'] == pytest.approx(2.0)
    assert knn['initial_value'] == pytest.approx(80.3)
    assert knn['verdict'] == 'holds'
    # one family: the pixel comparisons' Holm counts the gains too
    curve = data['statistics']['curve']
    assert [c['p_holm'] for c in curve] == holm([c['p'] for c in curve])
    # without a seed's epoch 0, that seed is left out of the pairs
    records = [r for r in data['records'] if r['key'] != 'mae_curve2@0']
    fewer = curve_comparisons(records, ['mae'], FLOORS, [2])
    assert {tuple(c['seeds'])
            for c in fewer if c['kind'] == 'curve_gain'} == {(0, 1)}
    text = claim_table(_results())
    assert '| mae dense mIoU at epoch 2 over its initial weights (80.60) | ' \
        'paired t | +2.00 |' in text
    assert 'The curve over its initial weights, holds: siameseim kNN top-1 ' \
        'at epoch 2 above its initial weights (+2.00' in text


def test_the_renderers_write_every_number_and_choice_from_the_file(tmp_path):
    results = _results()
    text = claim_table(results)
    assert '| **siameseim** | 0,1,2 |' in text
    assert '| siameseim gain over its initial weights | 0,1,2 |' in text
    # every column its floor: the dense ones on raw pixels only, none for
    # the token map's
    assert '| raw pixels (784 values) | - | 84.00 | 80.00 | 70.00 | 20.50 ' \
        '| 57.80 | - | - |' in text
    assert '| random projection of the pixels (8192 values) | - | 83.00 | ' \
        '81.00 | 69.00 | - | - | - | - |' in text
    assert 'Holm-adjusted p over all 36' in text
    assert '| LIN: siameseim - mae | Welch | +10.0 | +4.00 |' in text
    assert '| LIN: siameseim - mae (equal wall time) | Welch | +10.0 | ' \
        '+3.00 |' in text
    assert '| mae at equal wall time | 0,1,2 |' in text
    # equal-time runs of fewer seeds than the table: their own seeds
    data = dict(results['data'])
    data['records'] = [
        r for r in data['records'] if r['key'] != 'mae_time2@time'
    ]
    data['summary'] = summarise(data['records'], data['methods'])
    fewer = claim_table(dict(results, data=data))
    assert '| mae at equal wall time | 0,1 |' in fewer
    assert '| **mae** | 0,1,2 |' in fewer
    assert 'at epoch 2 over raw pixels (84.00)' in text
    assert 'Smoke run' in text
    setup = claim_setup(results)
    assert '* Seeds: 2 per method in the table (0, 1)' in setup
    assert ('mae (`MAE`, 75% of the patches masked, normalised-pixel '
            'target): RandomResizedCrop (crops 20%-100%); RandomFlip (p '
            '0.5).') in setup
    assert 'view 2: Brightness (p 0.8), GaussianBlur (p 0.1), Solarize ' \
        '(p 0.2)' in setup
    assert ('* siameseim: lr 0.001, weight decay 0.05; pooled feature: the '
            'cls token, without the final LayerNorm; token map with the '
            'final LayerNorm.') in setup
    assert 'token maps siameseim 8192, mae 8192; raw pixels 784; their ' \
        'random projection 8192' in setup
    # beside the table's wall times, and the steps' rate where recorded
    assert ('* The equal-time pretrainings took (median, min-max over their '
            'runs; on the machines below): mae 10 s (9-11, 3 run(s), 110 '
            'images/s (100-120)); the table\'s: siameseim 10 s (10-10, 3 '
            'run(s)); mae 10 s (10-10, 3 run(s)). Wall times include start-up '
            'and checkpoint writes') in setup
    # the synthetic records name their machine only for mae's equal time
    assert ('* Runs per host (records of each phase taken on each): host B '
            '(no details recorded): 3 equal-time; host not recorded: 12 '
            'search, 6 table, 18 curve.') in setup
    search = claim_search(results)
    assert '| siameseim | 0.0005 | 0.05 | avg_featmap | 60.50 | 50.00 |' \
        in search
    assert '| mae | 0.001 | 0.05 | featmap+norm | 71.00 | 50.00 |' in search
    summary = claim_summary(results)
    assert 'The paper\'s orderings, holds: siameseim vs mae on linear ' \
        'probe top-1 (+4.00' in summary
    for path in plot_claim(results['data'], str(tmp_path)):
        assert os.path.getsize(path) > 10_000


def test_a_study_without_a_curve_draws_no_learning_curve(tmp_path):
    data = dict(_results()['data'], curve={})
    paths = plot_claim(data, str(tmp_path))
    assert [os.path.basename(p) for p in paths] == ['claim_table.png']
    assert sorted(os.listdir(tmp_path)) == ['claim_table.png']
    with_curve = plot_claim(_results()['data'], str(tmp_path / 'curve'))
    assert [os.path.basename(p)
            for p in with_curve] == ['claim_table.png', 'learning_curve.png']


def test_a_curve_method_with_one_seed_is_named_as_not_tested_yet():
    results = _results()
    assert 'Not tested yet' not in claim_table(results)
    data = dict(results['data'])
    data['records'] = [
        r for r in data['records']
        if not (r['method'] == 'mae' and r.get('kind') == 'curve'
                and r['seed'] > 0)
    ]
    data['statistics'] = dict(
        data['statistics'],
        curve=curve_comparisons(data['records'], data['methods'], FLOORS,
                                data['curve_key_epochs']))
    text = claim_table(dict(results, data=data))
    assert 'Not tested yet (a test needs two seeds or more at the epoch): ' \
        'mae at epoch(s) 2 (seeds: 0).' in text


def test_a_study_in_progress_says_so_and_renders_what_it_holds(tmp_path):
    study = Config.fromfile(SMOKE)
    methods = {
        m: method_settings(Config.fromfile(os.path.join(ROOT, path)))
        for m, path in study.pretrain_configs.items() if m in study.methods
    }
    search_only = [r for r in _records(study) if r['kind'] == 'search']
    results = dict(
        meta={},
        data=claim_data(study, search_only, FLOORS, methods, {}, [], {}))
    text = claim_table(results)
    assert text.startswith('**In progress**: 0 of the table\'s 4 runs '
                           'recorded (12 search records)')
    assert '| raw pixels (784 values) | - | 84.00 |' in text
    assert 'No comparison yet: no table run is recorded.' in text
    assert 'Reading' not in text
    assert 'In progress' in claim_summary(results)
    assert '| siameseim | 0.001 | 0.05 | featmap+norm | 71.00 |' in \
        claim_search(results)
    assert 'In progress' not in claim_table(_results())
    for path in plot_claim(results['data'], str(tmp_path)):
        assert os.path.getsize(path) > 5_000


def test_the_scattered_probe_scores_are_summarised_beside_the_tests():
    study = Config.fromfile(SMOKE)
    records = _records(study)
    for r in records:
        if r['kind'] == 'table':
            details = dict(
                dense_boundary_iou=30.0 + r['seed'],
                dense_lowshot_miou=40.0 + r['seed'],
                dense_lowshot_boundary_iou=20.0)
            r.update(details)
            r['initial_weights'].update({k: v - 5 for k, v in details.items()})
    methods = {
        m: method_settings(Config.fromfile(os.path.join(ROOT, path)))
        for m, path in study.pretrain_configs.items() if m in study.methods
    }
    floors = dict(
        FLOORS,
        dense=dict(
            FLOORS['dense'],
            boundary_iou=12.0,
            lowshot_miou=15.0,
            lowshot_boundary_iou=11.0))
    data = claim_data(study, records, floors, methods, {}, [], {})
    text = claim_table(dict(meta={}, data=data))
    assert 'The dense probe\'s other scores (described, not tested)' in text
    assert '| **siameseim** | 0,1,2 | 31.00 ± 1.00 (30.00-32.00) | ' \
        '41.00 ± 1.00 (40.00-42.00) | 20.00 ± 0.00 (20.00-20.00) |' in text
    assert '| siameseim gain over its initial weights | 0,1,2 | ' \
        '5.00 ± 0.00' in text
    assert '| raw pixels | - | 12.00 | 15.00 | 11.00 |' in text
    # outside the tested family: no comparison of theirs, as many tests
    plain = claim_data(study, _records(study), FLOORS, methods, {}, [], {})
    tested = {c['metric'] for c in data['statistics']['table']}
    assert not tested & {'dense_boundary_iou', 'dense_lowshot_miou'}
    assert len(data['statistics']['table']) == \
        len(plain['statistics']['table'])


def test_a_missing_pixel_floor_is_named_in_the_table_and_dashed_beside():
    study = Config.fromfile(SMOKE)
    methods = {
        m: method_settings(Config.fromfile(os.path.join(ROOT, path)))
        for m, path in study.pretrain_configs.items() if m in study.methods
    }
    records = _records(study)
    for r in records:
        if r['kind'] == 'table':
            r['dense_boundary_iou'] = 30.0
            r['initial_weights']['dense_boundary_iou'] = 25.0
    # the scattered scores' floors are optional: a dash where one is absent
    text = claim_table(
        dict(
            meta={},
            data=claim_data(study, records, FLOORS, methods, {}, [], {})))
    assert '| raw pixels | - | - | - | - |' in text
    # the main table's are not: a file without the dense floor is refused
    data = claim_data(study, records, dict(FLOORS), methods, {}, [], {})
    del data['pixel_floors']['dense']  # a copy: FLOORS stays whole
    with pytest.raises(KeyError, match='dense'):
        claim_table(dict(meta={}, data=data))


def test_the_curve_sentence_names_the_epochs_each_method_is_scored_at():
    results = _results()
    text = claim_table(results)
    assert 'the first at each epoch of its method (siameseim [1, 2]), ' \
        'the others at epochs [2])' in text
    data = dict(results['data'], curve=dict(siameseim=[1, 2], mae=[2]))
    assert '(siameseim [1, 2], mae [2])' in claim_table(
        dict(results, data=data))
