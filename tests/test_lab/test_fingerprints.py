"""Published numbers that stay true: every results file has a kind, every
study's results have their smoke fingerprint recorded, and each fingerprint
holds at this code (mmsiameseim_lab/fingerprints.py). A failure here names
the numbers that changed and the command that records a new fingerprint
(tools/docs/record_fingerprint.py)."""
import glob
import json
import os.path as osp

import pytest

from mmsiameseim_lab import fingerprints as fp
from mmsiameseim_lab.results import RESULTS_DIR, read_results

RECORDED = fp.load()
FMNIST = osp.join(fp.REPO, 'data', 'fashion_mnist')


def _results_names():
    return sorted(
        osp.basename(p)[:-5]
        for p in glob.glob(osp.join(RESULTS_DIR, '*.json'))
        if osp.basename(p) != fp.FINGERPRINTS)


def test_every_results_file_has_a_kind():
    for name in _results_names():
        fp.results_kind(name)  # raises for a file of no kind
    assert set(fp.STUDIES) | fp.MEASUREMENTS | fp.TEST_RUNS >= set(
        _results_names())
    for units in fp.STUDIES.values():
        assert set(units) <= set(fp.UNITS)


def test_every_study_has_its_fingerprint_recorded_with_its_results():
    for name in sorted(fp.STUDIES):
        if not osp.isfile(osp.join(RESULTS_DIR, f'{name}.json')):
            continue
        taken = read_results(name)['meta']['commit']
        entry = RECORDED.get(name)
        assert entry is not None and entry['results_commit'] == taken, (
            f'docs/results/{name}.json (commit {taken[:7]}) has no smoke '
            'fingerprint recorded for it: python '
            f'tools/docs/record_fingerprint.py {name} (see its --help)')
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
def test_the_recorded_fingerprint_holds_at_this_code(unit):
    # A fingerprint is exact on the kind of CPU it was recorded on (the
    # smoke runs train in bf16 where the CPU has it natively, else in fp32,
    # and two makers' bf16 CPUs differ in the last bits).
    here = fp.cpu_kind()
    entries = {
        name: found
        for name, entry in sorted(RECORDED.items())
        for found in fp.fingerprints_of(entry)
        if unit in found['fingerprint'] and fp.entry_kind(found) == here
    }
    if not entries:
        kinds = sorted({
            fp.entry_kind(found)
            for entry in RECORDED.values()
            for found in fp.fingerprints_of(entry)
            if unit in found['fingerprint']
        })
        pytest.skip(f'{unit}: recorded on {kinds}, not on this kind of CPU '
                    f'({here}); record one here with tools/docs/'
                    'record_fingerprint.py')
    now = fp.compute_unit(unit)
    for name, entry in entries.items():
        diff = fp.differences(
            {unit: fp.scoped(name, unit, entry['fingerprint'][unit])},
            {unit: fp.scoped(name, unit, now)})
        assert not diff, (
            f'the smoke fingerprint of docs/results/{name}.json changed '
            f'(recorded at {entry["commit"][:7]} on {entry["machine"]}, '
            f'torch {entry["torch"]}):\n' + '\n'.join(diff[:20]) +
            '\nRetake the study and record its fingerprint, or record it '
            f'with a note: python tools/docs/record_fingerprint.py {name} '
            "--changed 'WHAT CHANGED' (see its --help)")
