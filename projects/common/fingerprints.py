"""Whether a published number could have changed: smoke fingerprints.

Every results file (:data:`projects.common.results.RESULTS_HOMES`) is one
of three kinds
(:func:`results_kind`):

* **study** (:data:`STUDIES`): its numbers come from training and
  scoring. Its fingerprint is its study run at smoke size with fixed seeds
  on the CPU (each :class:`Unit` well under a minute): the scores the run
  writes and the training losses it logs. The fingerprint recorded with the
  results file (``projects/common/results/fingerprints.json``) is the one
  of the code
  that took its numbers. The studies' tests
  (projects/common/tests/test_fingerprints.py) run every unit at the current
  code
  and check that it writes a well-formed record (the scores and losses the
  recorded fingerprint holds, all finite), never that its values equal
  those recorded on another CPU.
  ``projects/common/tools/record_fingerprint.py``
  compares values on request, on the kind of CPU they were recorded on, and
  records a note of what changed, which the block then shows.
* **measurement** (:data:`MEASUREMENTS`): timings and memory, a
  measurement of one commit on one machine; the block says which (date,
  machine, commit), and nothing is recomputed.
* **test run** (:data:`TEST_RUNS`): written by the test run itself
  (conftest.py): the counts and the fault and person matrices, which
  the tests' own markers make.

A fingerprint is exact on the kind of CPU it was computed on
(:func:`cpu_kind`: its model and cores, and whether it has native bf16, in
which the smoke runs then train): two bf16 CPUs of other makers differ in
the last bits of the same run. The record of a results file holds the
fingerprint of the CPU it was first recorded on, and those recorded for
the same results on other kinds of CPU beside it (``other_cpus``).

``projects/common/tools/record_fingerprint.py`` computes and records
fingerprints.
"""
import glob
import json
import os
import os.path as osp
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from mmsiameseim.atomic_io import atomic_json, load_json
from mmsiameseim.precision import native_bf16
from projects.common.metrics import DOWNSTREAM_HEADINGS, METRICS
from projects.common.results import (REPO, machine, read_results, results_path,
                                     run_meta)

FINGERPRINTS = 'fingerprints'  # the results file of the records
# a project's published output: its results files and figures
PUBLISHED = re.compile(r'^projects/[^/]+/(results|figures)/')
# What a study's results file scores (timings, counts and settings are not
# fingerprinted): the protocol's and the dense probe's metrics, the
# accumulation gradients' distances, the parity fixture's numbers.
SCORE_KEYS = frozenset(METRICS) | frozenset(
    {'fewshot_l2', 'exact', 'plain', 'loss', 'pred_norm', 'grad_norm'}) | \
    frozenset(DOWNSTREAM_HEADINGS)


@dataclass(frozen=True)
class Unit:
    """One smoke run: ``python ARGV`` in a source tree (``{work_dir}`` in
    ARGV is a fresh folder); its fingerprint is what ``results`` (a JSON
    file the run writes in the work dir, or None for the last line of its
    output) scores, and the training losses every ``scalars.json`` under the
    work dir holds."""
    argv: Tuple[str, ...]
    results: Optional[str] = None


PARITY = r'''
import json, sys, torch
from mmsiameseim.apis import build_from_official
from tests.helpers import fixture_samples
fx = torch.load('tests/data/official_parity_tiny.pt', weights_only=False)
cfg = fx['config']
model = build_from_official(fx['official_state_dict'],
                            num_heads=cfg['num_heads'],
                            decoder_num_heads=cfg['decoder_num_heads'])
out = {}
model.neck.register_forward_hook(lambda m, i, o: out.setdefault('pred', o))
inp = fx['inputs']
loss = model.loss([inp['view_a'].clone(), inp['view_b'].clone()],
                  fixture_samples(fx), update_target=False)['loss']
loss.backward()
grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()
                  if p.grad is not None])
print(json.dumps(dict(loss=float(loss), pred_norm=float(out['pred'].norm()),
                      grad_norm=float(grad.norm()))))
'''
ACCUMULATION = r'''
import json
try:
    from projects.accumulation.gradients import measure
except ImportError:  # a tree from before projects/
    try:
        from mmsiameseim_lab.accumulation.gradients import measure
    except ImportError:  # a tree from before the study rooms
        from mmsiameseim_lab.benchmark.accumulation import measure
print(json.dumps(dict(rows=measure(((16, 4), )))))
'''
# The accumulation study's exact and plain accumulation at the claim
# study's smoke size.
ACCUMULATION_STUDY_SMOKE = (
    'seeds=[0]', 'methods=[siameseim-microbatch4,siameseim-accum4]',
    'pretrain_overrides.train_dataloader.dataset.indices=128',
    'evaluation.knn.train_samples=400', 'evaluation.linear.train_samples=400',
    'evaluation.linear.epochs=1', 'evaluation.fewshot.fraction=0.002',
    'evaluation.test_samples=300', 'dense.train_mosaics=40',
    'dense.test_mosaics=20', 'dense.lowshot=10', 'dense.max_iter=20')

UNITS: Dict[str, Unit] = dict(
    demo_smoke=Unit(
        ('projects/demo/tools/demo.py', '--smoke', '--work-dir', '{work_dir}'),
        'demo.json'),
    claim_smoke=Unit(
        ('projects/claim/tools/claim_study.py', '--smoke', '--work-dir',
         '{work_dir}', '--cfg-options', 'seeds=[0]'), 'claim.json'),
    # rows a, h and j hold every level of every factor of Table 3
    table3_smoke=Unit(('projects/table3/tools/ablation_table3.py', '--smoke',
                       '--rows', 'a,h,j', '--work-dir', '{work_dir}'),
                      'table3.json'),
    accumulation_study_smoke=Unit(
        ('projects/claim/tools/claim_study.py', '--config',
         'projects/accumulation/configs/accumulation_study.py', '--only',
         'table', '--results-name', 'accumulation_study', '--work-dir',
         '{work_dir}', '--results-dir', '{work_dir}', '--cfg-options') +
        ACCUMULATION_STUDY_SMOKE, 'accumulation_study.json'),
    # two iterations of each miniature downstream config, from random
    # weights, on a small build of the miniature datasets
    downstream_smoke=Unit(
        ('projects/downstream_miniature/tools/downstream_miniature.py',
         '--smoke', '--work-dir', '{work_dir}'), 'downstream_miniature.json'),
    accumulation_gradients=Unit(('-c', ACCUMULATION)),
    parity=Unit(('-c', PARITY)),
)

# study results file -> the units of its fingerprint. The side-by-side
# runs our demo pretraining beside the authors' code, whose weights enter
# ours through the converter that the parity fixture checks.
STUDIES: Dict[str, Tuple[str, ...]] = dict(
    demo=('demo_smoke', ),
    claim=('claim_smoke', ),
    table3=('table3_smoke', ),
    accumulation_study=('accumulation_study_smoke', ),
    accumulation=('accumulation_gradients', ),
    downstream_miniature=('downstream_smoke', ),
    downstream_miniature_holdout=('downstream_smoke', ),
    downstream_miniature_ablations=('downstream_smoke', ),
    downstream_miniature_lengths=('downstream_smoke', ),
    downstream_miniature_init_parts=('downstream_smoke', ),
    downstream_miniature_init_parts_coco=('downstream_smoke', ),
    side_by_side=('demo_smoke', 'parity'),
)
#: What a study's fingerprint reads of a unit it shares, where it reads less
#: than the unit scores: score paths by prefix (the losses are always read).
#: The side-by-side pretrains as the demo does and scores the pretrained run
#: and its initial weights, none of the demo's other rows (the raw pixels, the
#: optional reference ViT).
SCOPES: Dict[Tuple[str, str], Tuple[str, ...]] = {
    ('side_by_side', 'demo_smoke'): ('rows.0.', 'rows.1.'),
}


def scoped(name: str, unit: str, fingerprint: dict) -> dict:
    """``fingerprint`` of ``unit`` as results file ``name`` reads it
    (:data:`SCOPES`)."""
    prefixes = SCOPES.get((name.split(':')[0], unit))
    if prefixes is None:
        return fingerprint
    return dict(
        fingerprint,
        scores={
            k: v
            for k, v in fingerprint.get('scores', {}).items()
            if k.startswith(prefixes)
        })


MEASUREMENTS = frozenset({
    'benchmark_attention', 'benchmark_checkpointing', 'benchmark_pretrain',
    'benchmark_unigrad', 'pipeline', 'preflight', 'gpu_check'
})
TEST_RUNS = frozenset(
    {'tests', 'tests_studies', 'fault_matrix', 'person_matrix'})


def results_kind(name: str) -> str:
    """'study', 'measurement' or 'test run' of results file ``name`` (a
    view ``NAME:VIEW`` is its file's); an unknown name is an error."""
    name = name.split(':')[0]
    if name in STUDIES:
        return 'study'
    if name in MEASUREMENTS:
        return 'measurement'
    if name in TEST_RUNS:
        return 'test run'
    raise KeyError(
        f'results file {name!r} has no kind: add it to STUDIES (with its '
        'fingerprint units), MEASUREMENTS or TEST_RUNS in '
        'projects/common/fingerprints.py')


def uncommitted_code(meta: dict) -> Optional[List[str]]:
    """The uncommitted changes a results file was taken with, outside the
    markdown, docs/ and the projects' results and figures (None when its
    meta does not list them)."""
    paths = meta.get('dirty_paths')
    if paths is None:
        return None
    return [
        p for p in paths if not p.endswith('.md') and not p.startswith('docs/')
        and not PUBLISHED.match(p)
    ]


def scores(data, path: str = '') -> Dict[str, float]:
    """Every number of ``data`` under a :data:`SCORE_KEYS` key, by its path
    (``rows.0.knn``)."""
    found = {}
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return found
    for key, value in items:
        where = f'{path}.{key}' if path else str(key)
        if str(key) in SCORE_KEYS and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            found[where] = value
        elif str(key) in SCORE_KEYS and isinstance(value, list) and all(
                isinstance(v, (int, float)) for v in value):
            found[where] = list(value)
        else:
            found.update(scores(value, where))
    return found


def logged_losses(work_dir: str) -> Dict[str, List[float]]:
    """The training losses of every ``scalars.json`` under ``work_dir``, by
    the file's folder (its run timestamp left out)."""
    losses = {}
    for path in sorted(
            glob.glob(
                osp.join(work_dir, '**', 'vis_data', 'scalars.json'),
                recursive=True)):
        run = osp.dirname(osp.dirname(osp.dirname(path)))
        key = osp.relpath(run, work_dir)
        with open(path) as f:
            values = [
                json.loads(line)['loss'] for line in f if '"loss"' in line
            ]
        losses.setdefault(key, []).extend(values)
    return losses


def _path_in(tree: str, path: str) -> str:
    """Where ``path`` (a project's tool or settings config) lies in
    ``tree``: an older tree has a tool under ``tools/studies/`` (before
    projects/) or ``tools/``, a settings config under ``configs/demo/``."""
    if not path.startswith('projects/') or osp.isfile(osp.join(tree, path)):
        return path
    for folder in ('tools/studies/', 'tools/', 'configs/demo/'):
        old = folder + osp.basename(path)
        if osp.isfile(osp.join(tree, old)):
            return old
    return path


def compute_unit(name: str,
                 tree: str = REPO,
                 work_dir: Optional[str] = None) -> dict:
    """The fingerprint of unit ``name`` with the code of ``tree`` (its own
    code first on PYTHONPATH, one thread), run in ``work_dir`` (a
    temporary folder by default)."""
    unit = UNITS[name]
    with tempfile.TemporaryDirectory(prefix=f'fingerprint_{name}_') as tmp:
        wd = work_dir or tmp
        argv = [a.replace('{work_dir}', wd) for a in unit.argv]
        argv = [_path_in(tree, a) for a in argv]
        env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS='1')
        run = subprocess.run(
            [sys.executable] + argv,
            cwd=tree,
            env=env,
            capture_output=True,
            text=True)
        if run.returncode:
            raise RuntimeError(
                f'fingerprint unit {name}: `python {" ".join(argv)}` failed '
                f'in {tree}:\n{(run.stdout + run.stderr)[-3000:]}')
        if unit.results is None:
            data = json.loads(run.stdout.strip().splitlines()[-1])
        else:
            data = load_json(osp.join(wd, unit.results))['data']
        return dict(scores=scores(data), losses=logged_losses(wd))


def compute(names: Sequence[str],
            tree: str = REPO,
            cache: Optional[dict] = None) -> Dict[str, dict]:
    """The fingerprint of each results file of ``names``: {unit: its
    fingerprint}; ``cache`` ({unit: fingerprint}) saves running a unit
    twice."""
    cache = {} if cache is None else cache
    out = {}
    for name in names:
        units = STUDIES[name.split(':')[0]]
        for unit in units:
            if unit not in cache:
                cache[unit] = compute_unit(unit, tree)
        out[name] = {unit: scoped(name, unit, cache[unit]) for unit in units}
    return out


def cpu_kind(machine_name: Optional[str] = None,
             bf16: Optional[bool] = None) -> str:
    """The kind of CPU a fingerprint is exact on: ``machine_name`` (this
    machine's, :func:`projects.common.results.machine`, by default) and
    whether it has native bf16 (``bf16``; this CPU's by default)."""
    name = machine() if machine_name is None else machine_name
    native = native_bf16() if bf16 is None else bf16
    return f'{name}, native bf16 {"yes" if native else "no"}'


def entry_kind(entry: dict) -> str:
    """The kind of CPU a recorded fingerprint (a record, or one of its
    ``other_cpus``) was computed on."""
    return entry.get('cpu') or cpu_kind(entry['machine'],
                                        entry['cpu_native_bf16'])


def fingerprints_of(entry: dict) -> List[dict]:
    """A record's fingerprints: its own, then those of ``other_cpus``."""
    return [entry] + list((entry.get('other_cpus') or {}).values())


def changed_note(entry: dict) -> Optional[str]:
    """What changed since a record's results were taken, as its own
    fingerprint or one of another CPU notes it (None: current)."""
    return next((e['changed']
                 for e in fingerprints_of(entry) if e.get('changed')), None)


def load(results_dir: Optional[str] = None,
         root: str = REPO) -> Dict[str, dict]:
    """The recorded fingerprints ({results name: record}) of
    ``results_dir``, else of their home under ``root``."""
    return load_json(results_path(FINGERPRINTS, results_dir, root)) or {}


def record(name: str,
           fingerprint: Dict[str, dict],
           changed: Optional[str] = None,
           results_dir: Optional[str] = None,
           command: Optional[str] = None,
           evidence: Optional[str] = None,
           root: str = REPO) -> dict:
    """Store ``fingerprint`` as the one of results file ``name`` on this
    kind of CPU (:func:`cpu_kind`), for the results file's own commit;
    ``changed`` says what changed since the results were taken (None: they
    are current), ``evidence`` why they are current. The results file and
    the records are those of ``results_dir``, else their homes under
    ``root``.

    For the results already recorded on another kind of CPU, it goes beside
    that fingerprint (``other_cpus``); for other results, it replaces the
    record, the other CPUs' fingerprints with it.

    Returns the record.
    """
    meta = run_meta(command)
    entry = dict(
        results_commit=read_results(name, results_dir,
                                    root)['meta'].get('commit'),
        commit=meta['commit'],
        date=meta['date'],
        machine=meta['machine'],
        torch=_torch_version(),
        cpu_native_bf16=native_bf16(),
        cpu=cpu_kind(meta['machine']),
        command=meta['command'],
        changed=changed,
        evidence=evidence,
        fingerprint=fingerprint)
    stored = load(results_dir, root)
    old = stored.get(name)
    if old and old.get('results_commit') == entry['results_commit']:
        kind = entry['cpu']
        others = {
            k: v
            for k, v in (old.get('other_cpus') or {}).items() if k != kind
        }
        if entry_kind(old) != kind:
            others[kind] = {
                k: v
                for k, v in entry.items() if k != 'results_commit'
            }
            entry = {k: v for k, v in old.items() if k != 'other_cpus'}
        if others:
            entry['other_cpus'] = dict(sorted(others.items()))
    stored[name] = entry
    atomic_json(
        results_path(FINGERPRINTS, results_dir, root),
        dict(sorted(stored.items())))
    return entry


def differences(recorded: Dict[str, dict], now: Dict[str, dict]) -> List[str]:
    """One line for each number of ``now`` that is not the recorded one."""
    lines = []
    for unit in sorted(set(recorded) | set(now)):
        old, new = recorded.get(unit, {}), now.get(unit, {})
        for part in ('scores', 'losses'):
            a, b = old.get(part, {}), new.get(part, {})
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    lines.append(f'{unit} {part} {key}: recorded '
                                 f'{_short(a.get(key))}, now '
                                 f'{_short(b.get(key))}')
    return lines


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) < 120 else text[:117] + '...'


def _torch_version() -> Optional[str]:
    try:
        import torch
        return torch.__version__
    except ImportError:
        return None


def export_tree(commit: str, folder: str) -> str:
    """The files of ``commit`` (``git archive``) in ``folder``, with the
    checkout's data folder linked in; returns ``folder``."""
    os.makedirs(folder, exist_ok=True)
    archive = subprocess.run(['git', '-C', REPO, 'archive', commit],
                             check=True,
                             capture_output=True).stdout
    subprocess.run(['tar', '-x', '-C', folder], input=archive, check=True)
    if osp.isdir(osp.join(REPO, 'data')):
        os.symlink(
            osp.realpath(osp.join(REPO, 'data')), osp.join(folder, 'data'))
    return folder
