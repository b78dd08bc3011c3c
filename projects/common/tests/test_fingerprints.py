"""Published numbers and their smoke runs: every results file has a kind,
every study's results have their smoke fingerprint recorded, and each
study's smoke run still runs end to end and scores what it recorded
(projects/common/fingerprints.py; projects/common/tools/record_fingerprint.py
records
one). The values are a record, not a gate: they hold on one CPU model only."""
import json
import math
import os.path as osp

import pytest

from projects.common import fingerprints as fp
from projects.common.results import (RESULTS_HOMES, published_results,
                                     read_results, results_path)

RECORDED = fp.load()
FMNIST = osp.join(fp.REPO, 'data', 'fashion_mnist')


def _results_names():
    return sorted(set(published_results()) - {fp.FINGERPRINTS})


def test_every_results_file_has_a_kind_and_a_home():
    for name in _results_names():
        fp.results_kind(name)  # raises for a file of no kind
    kinds = set(fp.STUDIES) | fp.MEASUREMENTS | fp.TEST_RUNS
    assert kinds >= set(_results_names())
    assert kinds | {fp.FINGERPRINTS} == set(RESULTS_HOMES)
    for units in fp.STUDIES.values():
        assert set(units) <= set(fp.UNITS)


def test_every_study_has_its_fingerprint_recorded_with_its_results():
    for name in sorted(fp.STUDIES):
        if not osp.isfile(results_path(name)):
            continue
        taken = read_results(name)['meta']['commit']
        entry = RECORDED.get(name)
        assert entry is not None and entry['results_commit'] == taken, (
            f'{osp.relpath(results_path(name), fp.REPO)} (commit '
            f'{taken[:7]}) has no smoke '
            'fingerprint recorded for it: python '
            'projects/common/tools/record_fingerprint.py '
            f'{name} (see its --help)')
        assert set(entry['fingerprint']) == set(fp.STUDIES[name])


def test_scores_and_losses_are_what_a_fingerprint_holds(tmp_path):
    data = dict(
        rows=[dict(method='a', knn=1.5, wall_s=9.0, images_per_s=3.0)],
        summary=dict(a=dict(fewshot=2.0, dense_iou_list=[1, 2])),
        records=[dict(dense_miou=0.5, dense_iou=[0.1], linear=None)])
    assert fp.scores(data) == {
        'rows.0.knn': 1.5,
        'summary.a.fewshot': 2.0,
        'records.0.dense_miou': 0.5
    }
    run = tmp_path / 'siameseim' / '20260101_000000' / 'vis_data'
    run.mkdir(parents=True)
    (run / 'scalars.json').write_text(
        json.dumps(dict(iter=1, loss=0.5)) + '\n' +
        json.dumps(dict(iter=1, knn_top1=3.0)) + '\n' +
        json.dumps(dict(iter=2, loss=0.25)) + '\n')
    assert fp.logged_losses(str(tmp_path)) == {'siameseim': [0.5, 0.25]}
    old = dict(u=dict(scores={'k': 1.0}, losses={'r': [0.5]}))
    new = dict(u=dict(scores={'k': 1.0}, losses={'r': [0.5000001]}))
    assert fp.differences(old, old) == []
    assert fp.differences(
        old, new) == ['u losses r: recorded [0.5], now [0.5000001]']


def test_a_study_reads_only_its_scope_of_a_shared_unit():
    """The side-by-side shares the demo's smoke run but scores only its
    pretrained run and initial weights: the demo's other rows (raw pixels,
    the optional reference ViT) do not move its fingerprint."""
    demo = dict(
        scores={
            'rows.0.knn': 52.0,
            'rows.1.knn': 53.3,
            'rows.2.knn': 49.3,
            'pixels.knn': 60.0
        },
        losses={'siameseim': [2.0, 1.6]})
    side = fp.scoped('side_by_side', 'demo_smoke', demo)
    assert side == dict(
        scores={
            'rows.0.knn': 52.0,
            'rows.1.knn': 53.3
        },
        losses={'siameseim': [2.0, 1.6]})
    assert fp.scoped('demo', 'demo_smoke', demo) == demo
    assert fp.scoped('side_by_side', 'parity', demo) == demo
    fewer_rows = dict(demo, scores={'rows.0.knn': 52.0, 'rows.1.knn': 53.3})
    assert fp.differences(
        {'demo_smoke': fp.scoped('side_by_side', 'demo_smoke', demo)},
        {'demo_smoke': fp.scoped('side_by_side', 'demo_smoke', fewer_rows)
         }) == []
    assert fp.differences({'demo_smoke': demo}, {'demo_smoke': fewer_rows})


def _units_recorded():
    return sorted({u for e in RECORDED.values() for u in e['fingerprint']})


@pytest.mark.skipif(
    not osp.isfile(osp.join(FMNIST, 'train-images-idx3-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
@pytest.mark.parametrize('unit', _units_recorded())
def test_each_smoke_unit_runs_end_to_end_and_scores_what_it_recorded(unit):
    """A study's smoke run runs end to end at this code and writes a
    well-formed record: the scores and training losses its recorded
    fingerprint holds, every one a finite number. Its values are not
    compared: they hold on one CPU model only (bf16 on two makers' CPUs, or
    two families of one maker, differs in the last bits and moves a few-shot
    score by one test image), and a study's numbers are statistics over
    seeds, valid from any host."""
    now = fp.compute_unit(unit)
    for name, entry in sorted(RECORDED.items()):
        for found in fp.fingerprints_of(entry):
            if unit not in found['fingerprint']:
                continue
            recorded = fp.scoped(name, unit, found['fingerprint'][unit])
            scoped = fp.scoped(name, unit, now)
            assert set(scoped['scores']) == set(recorded['scores']), (
                f'{unit} ({name}.json): scores '
                f'{sorted(set(scoped["scores"]) ^ set(recorded["scores"]))} '
                'appear or vanish')
            assert {
                k: len(v)
                for k, v in scoped['losses'].items()
            } == {
                k: len(v)
                for k, v in recorded['losses'].items()
            }, f'{unit}: other training runs or iterations logged'
    values = [
        x for v in now['scores'].values()
        for x in (v if isinstance(v, list) else [v])
    ] + [x for v in now['losses'].values() for x in v]
    assert values and all(math.isfinite(x) for x in values), now
