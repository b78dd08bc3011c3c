"""projects/common/tools/record_fingerprint.py: a fingerprint recorded with
results taken
at this commit is current; results of an earlier commit are compared with
that commit's fingerprint or recorded with a note; results taken with
uncommitted code get the note that their fingerprint is unknown."""
import json
import subprocess

import pytest

from projects.common import fingerprints as fp
from tests.helpers import ROOT, load_tool

# a unit that runs in no time: its "scores" are its last line of output
PROBE = fp.Unit(('-c', 'import json; print(json.dumps(dict(knn=1.5)))'))


@pytest.fixture
def probe(monkeypatch, tmp_path):
    monkeypatch.setitem(fp.UNITS, 'probe_smoke', PROBE)
    monkeypatch.setitem(fp.STUDIES, 'probe', ('probe_smoke', ))
    head = subprocess.run(['git', '-C', ROOT, 'rev-parse', 'HEAD'],
                          check=True,
                          capture_output=True,
                          text=True).stdout.strip()

    def results(commit, dirty_paths=()):
        (tmp_path / 'probe.json').write_text(
            json.dumps(
                dict(
                    meta=dict(commit=commit, dirty_paths=list(dirty_paths)),
                    data=dict(rows=[dict(knn=1.5)]))))

    return head, results, str(tmp_path)


def test_results_of_this_commit_are_recorded_as_current(probe, capsys):
    head, results, rdir = probe
    results(head)
    tool = load_tool('projects/common/tools/record_fingerprint.py')
    assert tool.main(['probe', '--results-dir', rdir]) == 0
    entry = fp.load(rdir)['probe']
    assert entry['results_commit'] == head and entry['changed'] is None
    assert entry['fingerprint'] == dict(
        probe_smoke=dict(scores={'knn': 1.5}, losses={}))
    assert 'probe: recorded as current' in capsys.readouterr().out


def test_earlier_results_need_evidence_or_a_note(probe, capsys):
    head, results, rdir = probe
    parent = subprocess.run(['git', '-C', ROOT, 'rev-parse', 'HEAD~1'],
                            check=True,
                            capture_output=True,
                            text=True).stdout.strip()
    results(parent)
    tool = load_tool('projects/common/tools/record_fingerprint.py')
    assert tool.main(['probe', '--results-dir', rdir]) == 1
    assert 'pass --against-results-commit or --changed' in \
        capsys.readouterr().out
    assert fp.load(rdir) == {}  # nothing recorded

    assert tool.main(
        ['probe', '--results-dir', rdir, '--changed', 'the loss changed']) == 0
    assert fp.load(rdir)['probe']['changed'] == 'the loss changed'

    # taken with uncommitted code: no commit holds it, so no comparison
    results(parent, [
        'mmsiameseim/models/losses/unigrad_loss.py',
        'projects/demo/tools/demo.py', 'a.md', 'docs/results/tests.json',
        'projects/demo/results/demo.json', 'projects/claim/figures/a.png'
    ])
    assert tool.main(
        ['probe', '--results-dir', rdir, '--against-results-commit']) == 0
    assert fp.load(rdir)['probe']['changed'] == (
        f'taken at {parent[:7]} with uncommitted changes to 2 files, whose '
        'smoke fingerprint is unknown')


def test_another_kind_of_cpu_records_beside_the_first(probe, monkeypatch):
    head, results, rdir = probe
    results(head)
    tool = load_tool('projects/common/tools/record_fingerprint.py')
    kinds = iter(['cpu A, native bf16 yes', 'cpu B, native bf16 yes'] * 2)
    monkeypatch.setattr(fp, 'cpu_kind', lambda *a: next(kinds))
    assert tool.main(['probe', '--results-dir', rdir]) == 0  # A
    first = fp.load(rdir)['probe']
    assert fp.entry_kind(first) == 'cpu A, native bf16 yes'
    assert 'other_cpus' not in first
    assert tool.main(
        ['probe', '--results-dir', rdir, '--changed', 'the loss changed'])\
        == 0  # B, with a note: A's own record stays as it was
    entry = fp.load(rdir)['probe']
    assert {k: v for k, v in entry.items() if k != 'other_cpus'} == first
    assert list(entry['other_cpus']) == ['cpu B, native bf16 yes']
    assert [fp.entry_kind(e) for e in fp.fingerprints_of(entry)] == \
        ['cpu A, native bf16 yes', 'cpu B, native bf16 yes']
    assert fp.changed_note(entry) == 'the loss changed'
    assert tool.main(['probe', '--results-dir', rdir]) == 0  # A again
    entry = fp.load(rdir)['probe']
    assert list(entry['other_cpus']) == ['cpu B, native bf16 yes']
    # results retaken: the other CPU's fingerprint was of the old ones
    parent = subprocess.run(['git', '-C', ROOT, 'rev-parse', 'HEAD~1'],
                            check=True,
                            capture_output=True,
                            text=True).stdout.strip()
    results(parent)
    assert tool.main(['probe', '--results-dir', rdir, '--changed', 'x']) == 0
    entry = fp.load(rdir)['probe']
    assert entry['results_commit'] == parent and 'other_cpus' not in entry


def test_a_record_without_its_cpu_kind_is_read_by_machine_and_bf16():
    old = dict(machine='AMD EPYC, 2 cores', cpu_native_bf16=False)
    assert fp.entry_kind(old) == 'AMD EPYC, 2 cores, native bf16 no'
    assert fp.cpu_kind('x, 2 cores', True) == 'x, 2 cores, native bf16 yes'
