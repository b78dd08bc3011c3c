"""The claim study's phases planned from the records so far: the search
grid, the choice of setting and features on held-out scores, the table at
the chosen setting, the equal-wall-time budget and the curve's seeds."""
import os

import pytest
from mmengine.config import Config

from projects.claim.plan import (check_study, choices, curve_runs, equal_time,
                                 equal_time_runs, feature_runs, pending,
                                 record_key, search_runs, table_runs)
from projects.claim.runner import share_images
from tests.helpers import ROOT

STUDY = os.path.join(ROOT, 'projects', 'claim', 'configs', 'claim_study.py')


def _study(**changes):
    study = Config.fromfile(STUDY)
    study.merge_from_dict(changes)
    return study


def _held(run, knn, variant=None):
    return dict(
        key=record_key(run, 0, variant),
        method=run['method'],
        kind='search',
        lr=run['lr'],
        weight_decay=run['weight_decay'],
        knn=knn,
        fewshot=50.0)


def test_the_grid_is_the_same_for_every_method_at_the_table_budget():
    study = _study()
    grid = search_runs(study)
    assert len(grid) == 3 * 3 * 2
    assert {(r['lr'], r['weight_decay'])
            for r in grid
            if r['method'] == 'mocov3'} == {(lr, wd)
                                            for lr in (5e-4, 1e-3, 2e-3)
                                            for wd in (0.05, 0.1)}
    assert all(r['epochs'] == 1 and r['seed'] == 0 for r in grid)
    assert grid[0]['key'] == 'siameseim_lr0.0005_wd0.05_seed0_1e'
    assert record_key(grid[0], 1) == 'siameseim_lr0.0005_wd0.05_seed0_1e' \
        '@holdout'


def test_choices_take_the_best_held_out_score_then_the_best_feature():
    study = _study(methods=['siameseim'], curve=dict(_delete_=True))
    grid = search_runs(study)
    # the grid alone: no choice yet, the feature runs of the best setting
    records = [_held(r, 70.0 + i) for i, r in enumerate(grid)]
    best = max(grid, key=lambda r: 70.0 + grid.index(r))
    assert choices(study, records) is None
    (fr, ) = feature_runs(study, records)
    assert fr['key'] == best['key'] and len(fr['variants']) == 6
    assert pending(fr, {r['key'] for r in records}) == [0]
    # each variant scored: avg_featmap+norm best of the pooled ones,
    # featmap without norm of the token map's
    scores = {
        'cls_token': 60,
        'cls_token+norm': 61,
        'avg_featmap': 62,
        'avg_featmap+norm': 63,
        'featmap': 80,
        'featmap+norm': 79
    }
    from projects.claim.plan import variant_name
    records += [_held(fr, scores[variant_name(v)], v) for v in fr['variants']]
    assert pending(fr, {r['key'] for r in records}) == []
    chosen = choices(study, records)['siameseim']
    assert (chosen['lr'], chosen['weight_decay']) == (best['lr'],
                                                      best['weight_decay'])
    assert chosen['pooled'] == dict(feature='avg_featmap', final_norm=True)
    assert chosen['token_map'] == dict(feature='featmap', final_norm=False)
    runs = table_runs(study, dict(siameseim=chosen))
    assert [r['seed'] for r in runs] == [0, 1, 2, 3, 4]
    assert all(r['lr'] == best['lr'] for r in runs)
    # the table's seed-0 pretraining is the search's: one work dir
    assert runs[0]['key'] == best['key']


def test_a_method_whose_grid_is_recorded_gets_its_feature_runs_first():
    study = _study(methods=['siameseim', 'mae'], curve=dict(_delete_=True))
    grid = [r for r in search_runs(study) if r['method'] == 'siameseim']
    records = [_held(r, 70.0 + i) for i, r in enumerate(grid)]
    # mae's grid not recorded: siameseim's feature runs go on, no choice
    (fr, ) = feature_runs(study, records)
    assert fr['method'] == 'siameseim' and len(fr['variants']) == 6
    assert choices(study, records) is None


def _table(method, seed, wall):
    return dict(
        key=f'{method}{seed}',
        method=method,
        seed=seed,
        kind='table',
        epochs=1,
        pretrain_wall_s=wall)


def test_equal_time_gives_each_method_the_reference_wall_time():
    study = _study()
    records = [_table('siameseim', s, 180.0) for s in range(5)]
    records += [_table('mae', s, 140.0 + s) for s in range(5)]
    assert equal_time(study, records) is None  # mocov3 not recorded yet
    records += [_table('mocov3', s, 350.0) for s in range(5)]
    budget = equal_time(study, records)
    assert budget['wall_s'] == 180.0
    assert budget['methods']['mae']['epoch_wall_s'] == 142.0
    assert budget['methods']['mae']['exact_epochs'] == pytest.approx(
        1.268, abs=1e-3)
    # the table's epoch, over 1.27 (mae) and 0.51 (mocov3) of the images
    assert budget['methods']['mae']['epochs'] == 1
    assert budget['methods']['mae']['images_share'] == 1.27
    assert budget['methods']['mocov3']['images_share'] == 0.51
    assert budget['methods']['siameseim']['images_share'] == 1.0
    chosen = {m: dict(lr=1e-3, weight_decay=0.05) for m in study.methods}
    runs = equal_time_runs(study, chosen, budget)
    assert [(r['method'], r['epochs'], r['images_share']) for r in runs] == \
        [('mae', 1, 1.27), ('mocov3', 1, 0.51)] * 5
    assert runs[0]['key'] == 'mae_lr0.001_wd0.05_seed0_1e_share1.27'
    assert record_key(runs[0], 1).endswith('_share1.27@time')
    # a share fixed by the settings (the smoke study's) is taken as it is
    fixed = _study(equal_time=dict(images_share=dict(mae=0.5)))
    assert equal_time(fixed, records)['methods']['mae']['images_share'] == 0.5
    # a method at the reference's pace has no equal-time run
    budget['methods']['mae']['images_share'] = 1.0
    assert {r['method'] for r in equal_time_runs(study, chosen, budget)} \
        == {'mocov3'}


def test_an_equal_time_run_sees_its_share_of_the_images():
    cfg = Config(
        dict(train_dataloader=dict(dataset=dict(type='X', indices=10))))
    share_images(cfg, 0.5)
    assert cfg.train_dataloader.dataset.indices == [0, 1, 2, 3, 4]
    cfg.train_dataloader.dataset.indices = [7, 8, 9, 3]
    share_images(cfg, 1.5)
    assert cfg.train_dataloader.dataset.indices == [7, 8, 9, 3, 7, 8]
    with pytest.raises(ValueError, match='images_share=0.01 leaves no'):
        share_images(cfg, 0.01)


def test_curve_seeds_beyond_the_first_are_scored_at_the_key_epochs():
    study = _study()
    chosen = {
        m: dict(lr=1e-3, weight_decay=0.05)
        for m in ('siameseim', 'mae', 'mocov3')
    }
    runs = curve_runs(study, chosen)
    first = [r for r in runs if r['seed'] == 0]
    assert [(r['method'], r['evaluate_at'])
            for r in first] == [('siameseim', [0, 1, 2, 4, 8, 16]),
                                ('mae', [0, 1, 4, 16]),
                                ('mocov3', [0, 1, 4, 16])]
    other = [r for r in runs if r['seed'] == 2]
    assert all(r['evaluate_at'] == [0, 1, 4, 16] for r in other)
    assert record_key(other[0], 0) == 'siameseim_lr0.001_wd0.05_seed2_16e@0'


def test_study_refuses_a_search_or_reference_that_cannot_run():
    with pytest.raises(ValueError, match='search.criterion'):
        check_study(_study(search=dict(criterion='linear')))
    with pytest.raises(ValueError, match='search.lr is empty'):
        check_study(_study(search=dict(lr=[])))
    with pytest.raises(ValueError, match='equal_time.reference'):
        check_study(_study(equal_time=dict(reference='byol')))
    with pytest.raises(ValueError, match="images_share=.* has {'byol': 0.5}"):
        check_study(_study(equal_time=dict(images_share=dict(byol=0.5))))
    with pytest.raises(ValueError, match='search.pooled takes'):
        check_study(
            _study(
                search=dict(
                    pooled=[dict(feature='featmap', final_norm=False)])))
