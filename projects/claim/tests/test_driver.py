"""The claim study continues from its results file record by record: a
record is kept only when the digest of the settings it was taken under is
the current one, and a later phase only on the earlier phases' kept
records (synthetic records, a stand-in scorer); and every published
record of the driver's results files is kept at this code."""
import os

from mmengine.config import Config

from projects.claim.driver import current_records, expected_digests, phase_runs
from tests.helpers import ROOT

SMOKE = os.path.join(ROOT, 'projects', 'claim', 'configs',
                     'claim_study_smoke.py')


class Scorer:
    """The settings part of :class:`Scorer`, without building a protocol."""
    search_holdout = 300

    def __init__(self, version=1):
        self.version = version

    def settings(self, chosen, held=False):
        return dict(version=self.version, held=held, chosen=chosen)


def _record(key, sha, run, **scores):
    return dict(
        key=key,
        settings_sha1=sha,
        method=run['method'],
        seed=run['seed'],
        kind=run['kind'],
        lr=run['lr'],
        weight_decay=run['weight_decay'],
        epochs=run['epochs'],
        pretrain_wall_s=10.0,
        knn=scores.get('knn', 50.0),
        fewshot=50.0)


def _records_of(runs, study, scorer, knn=lambda run: 50.0):
    out = []
    for run in runs:
        for key, sha in expected_digests(study, run, scorer, ROOT).items():
            out.append(_record(key, sha, run, knn=knn(run)))
    return out


def test_records_are_kept_under_their_settings_phase_by_phase():
    study = Config.fromfile(SMOKE)
    scorer = Scorer()
    grid = phase_runs('search', study, [])
    assert len(grid) == 4  # the grid; the feature runs wait for it
    records = _records_of(grid, study, scorer, lambda r: 1000 * r['lr'])
    features = [
        r for r in phase_runs('search', study, records) if r.get('variants')
    ]
    assert [r['lr'] for r in features] == [1e-3, 1e-3]  # the best setting
    records += _records_of(features, study, scorer)
    table = phase_runs('table', study, records)
    assert len(table) == 4 and all(r['lr'] == 1e-3 for r in table)
    # the table's seed-0 pretraining is the search's best one: reused
    assert table[0]['key'] == features[0]['key']
    records += _records_of(table, study, scorer)
    kept = current_records(study, records, scorer, ROOT)
    assert len(kept) == len(records)
    # one record taken under other settings is dropped, not mixed in
    stale = dict(records[-1], settings_sha1='0' * 16)
    kept = current_records(study, records[:-1] + [stale], scorer, ROOT)
    assert [r['key'] for r in kept] == [r['key'] for r in records[:-1]]
    # other evaluation settings: nothing is kept
    assert current_records(study, records, Scorer(version=2), ROOT) == []
    # without the search's records the table is not planned, and its
    # records are not kept
    assert phase_runs('table', study, records[len(grid):]) is None
    kept = current_records(study, records[len(grid):], scorer, ROOT)
    assert kept == []


def test_pixel_floors_are_kept_only_under_the_same_settings_and_precision(
        monkeypatch):
    import mmsiameseim.evaluation as evaluation
    from projects.claim.driver import kept_floors
    monkeypatch.setattr(evaluation, 'native_bf16', lambda: True)
    settings = dict(
        evaluation=dict(knn=dict(k=20)),
        dense=dict(canvas=32),
        pixel_floors=dict(projection_dim=8),
        search=None)
    floors = dict(raw=dict(knn=80.0), projection=dict(knn=81.0))
    stored = dict(pixel_floors=floors, settings=settings, native_bf16=True)
    assert kept_floors(stored, settings) is floors
    # a setting the floors do not depend on does not matter
    assert kept_floors(stored, dict(settings, search=dict(lr=[1]))) is floors
    for key, other in (('evaluation', dict(knn=dict(k=10))),
                       ('dense', dict(canvas=64)), ('pixel_floors',
                                                    dict(projection_dim=16))):
        assert kept_floors(stored, dict(settings, **{key: other})) is None
    assert kept_floors(dict(stored, native_bf16=False), settings) is None
    assert kept_floors(None, settings) is None
    assert kept_floors(dict(stored, pixel_floors=None), settings) is None


def test_every_published_claim_format_record_is_planned_at_this_code(tmp_path):
    """The published results files of the claim study and of the
    accumulation study (the same driver) are continued, not retaken, at
    this code: every record's settings digest is the one the driver expects
    now. The digest reads each pretraining config's values (bases followed)
    and the plugin's version, so a changed value orphans that method's
    records (a rerun of the study would retrain them); this test names it
    instead. A comment edit orphans nothing
    (projects/common/tests/test_config_values.py)."""
    from mmsiameseim.atomic_io import load_json
    from projects.claim.driver import study_scorer
    from projects.common.results import results_path
    for settings, name in (
        ('projects/claim/configs/claim_study.py',
         'claim'), ('projects/accumulation/configs/accumulation_study.py',
                    'accumulation_study')):
        study = Config.fromfile(os.path.join(ROOT, settings))
        scorer = study_scorer(study, ROOT, str(tmp_path / name),
                              os.path.join(ROOT, 'data', 'fashion_mnist'))
        records = load_json(results_path(name))['data']['records']
        kept = {
            r['key']
            for r in current_records(study, records, scorer, ROOT)
        }
        orphaned = sorted({r['key'] for r in records} - kept)
        assert records and not orphaned, (
            f'{results_path(name)}: {len(orphaned)} of {len(records)} '
            f'records are not planned at this code (first: {orphaned[:3]}); '
            'a pretraining or probe config the study hashes has changed')
