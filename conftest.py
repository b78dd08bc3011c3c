"""The test session of the plugin's tests and the studies' tests.

At the repository's root so that tests/ and projects/*/tests each run
alone: the tiers' markers (:data:`STUDY_TESTS`, :data:`PACKAGE_TESTS`), the
fault and person matrices' markers checked, the results files of a test
run, the durations, and the fixtures both share.
"""
import json
import os
import shlex
import time

import pytest
import torch
from mmengine.registry import DefaultScope

from tests.helpers import DATA, ROOT

_SCOPES_AT_START = set(DefaultScope._instance_dict)


def _matrices():
    """Marker name -> (entries, columns, column key) of the two matrices of
    docs/reliability.md."""
    from tests.fault_matrix import ENTRIES, FAULTS
    from tests.person_matrix import MISTAKES
    return dict(
        fault_matrix=(ENTRIES, FAULTS, 'fault'),
        person_matrix=(ENTRIES, MISTAKES, 'mistake'))


# The studies' tests (`make test-studies`): every project's (projects/*/tests)
# and the plugin's tests that run a study. `make test` runs the rest, the
# plugin's own tests; both run in CI.
STUDY_TESTS = (
    'projects/',
    'tests/test_configs/test_table3_ablations.py::test_miniature_run_smoke',
)

# The released package's tests (`make test-package`): the built wheel
# installed away from the checkout, the documented install in a fresh
# virtual environment, mim's launchers; CI runs them too.
PACKAGE_TESTS = ('tests/test_packaging/', )


def _is_under(item, prefixes: tuple) -> bool:
    """Whether the test's id (from the rootdir, or from tests/ when pytest
    runs there) starts with one of ``prefixes``."""
    return item.nodeid.startswith(prefixes) or (
        'tests/' + item.nodeid).startswith(prefixes)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """Mark the studies' tests ``studies`` (:data:`STUDY_TESTS`) and the
    package's ``package`` (:data:`PACKAGE_TESTS`).

    Check
    every ``fault_matrix`` / ``person_matrix`` marker against the
    vocabulary of ``tests/fault_matrix.py`` / ``tests/person_matrix.py``;
    with ``FAULT_MATRIX_JSON=PATH`` set, also write the fault matrix's cells
    (entry, fault, behaviour, test id) to PATH; with ``MMSIAMESEIM_RESULTS=1``,
    the results files ``fault_matrix`` and ``person_matrix`` (not when a
    module failed to be collected: its cells would be missing).
    """
    for item in items:
        if _is_under(item, STUDY_TESTS):
            item.add_marker(pytest.mark.studies)
        if _is_under(item, PACKAGE_TESTS):
            item.add_marker(pytest.mark.package)
    cells = {name: [] for name in _matrices()}
    for item in items:
        for name, (entries, columns, key) in _matrices().items():
            for mark in item.iter_markers(name):
                if (len(mark.args) != 3 or mark.args[0] not in entries
                        or mark.args[1] not in columns):
                    raise pytest.UsageError(
                        f'{item.nodeid}: {name}(entry, {key}, behaviour) '
                        f'needs an entry of {sorted(entries)} and a {key} of '
                        f'{sorted(columns)}, got {mark.args}')
                cells[name].append(
                    dict(
                        zip(('entry', key, 'behaviour'), mark.args),
                        test=item.nodeid))
    out = os.environ.get('FAULT_MATRIX_JSON')
    if out:
        with open(out, 'w') as f:
            json.dump(cells['fault_matrix'], f, indent=1)
    config._matrix_cells = None
    if _recording(config) and session.testsfailed:
        config.pluginmanager.get_plugin('terminalreporter').write_line(
            f'MMSIAMESEIM_RESULTS: {session.testsfailed} collection '
            'error(s): fault_matrix.json and person_matrix.json not written',
            red=True)
    elif _recording(config):
        config._matrix_cells = cells
        if config.option.collectonly:
            _write_matrices(config)


def _write_matrices(config):
    from projects.common.results import write_results
    for name, (entries, columns, key) in _matrices().items():
        write_results(
            name, {
                'entries': entries,
                f'{key}s': columns,
                'cells': config._matrix_cells[name],
                'args': list(config.invocation_params.args)
            },
            command=_command(config),
            results_dir=os.environ.get('MMSIAMESEIM_RESULTS_DIR'))


# The results files of a test run (tests.json, or tests_studies.json for the
# studies' run: counts and wall time; {fault,person}_matrix.json, the matrix
# markers; their homes in projects/common/results.py),
# written only with MMSIAMESEIM_RESULTS=1 (MMSIAMESEIM_RESULTS_DIR: another
# folder); both at the end of a run, so that the run's own check of the
# rendered tables sees the committed files (the matrices at collection with
# `--collect-only`).
def _recording(config):
    return os.environ.get('MMSIAMESEIM_RESULTS') == '1' and \
        not hasattr(config, 'workerinput')  # not in xdist workers


def _command(config):
    return shlex.join(['pytest', *config.invocation_params.args])


def pytest_sessionstart(session):
    session.config._results_t0 = time.time()


#: nodeid -> seconds (set-up, call and tear-down) of this run's tests
_DURATIONS = {}


def pytest_runtest_logreport(report):
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid,
                                               0.) + report.duration


def _slowest(count=15):
    return [
        dict(test=k, seconds=round(v, 2))
        for k, v in sorted(_DURATIONS.items(), key=lambda kv: -kv[1])[:count]
    ]


def _selection(config) -> str:
    """'plugin', 'studies' or 'package': the selection a run's marker
    expression makes."""
    expr = config.option.markexpr or ''
    if 'not studies' in expr:
        return 'plugin'
    for tier in ('studies', 'package'):
        if tier in expr:
            return tier
    return 'all'


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The run's wall time, and where its per-test durations went."""
    if config.option.collectonly or hasattr(config, 'workerinput'):
        return
    wall = time.time() - config._results_t0
    path = _write_durations(config, wall)
    terminalreporter.write_line(
        f'wall time: {wall / 60:.1f} min ({wall:.0f} s); every test\'s '
        f'duration: {path}')


def _write_durations(config, wall: float) -> str:
    """Every test's duration of this run, slowest first, in
    ``work_dirs/test_durations/SELECTION.json``."""
    from mmsiameseim.atomic_io import atomic_json
    path = os.path.join(ROOT, 'work_dirs', 'test_durations',
                        f'{_selection(config)}.json')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_json(
        path,
        dict(
            args=list(config.invocation_params.args),
            markexpr=config.option.markexpr,
            wall_s=round(wall, 1),
            durations=_slowest(count=None)))
    return os.path.relpath(path, ROOT)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if not _recording(config) or config.option.collectonly:
        return
    reporter = config.pluginmanager.get_plugin('terminalreporter')
    stats = reporter.stats if reporter else {}

    def count(key):  # the terminal summary's counts
        return len(stats.get(key, []))

    if getattr(config, '_matrix_cells', None) is not None:
        _write_matrices(config)
    from projects.common.results import write_results
    selection = _selection(config)
    write_results(
        f'tests_{selection}' if selection in ('studies',
                                              'package') else 'tests',
        dict(
            passed=count('passed'),
            failed=count('failed'),
            errors=count('error'),
            skipped=count('skipped'),
            xfailed=count('xfailed'),
            deselected=count('deselected'),
            collected=session.testscollected,
            exitstatus=int(exitstatus),
            duration_s=time.time() - config._results_t0,
            markexpr=config.option.markexpr,
            args=list(config.invocation_params.args),
            slowest=_slowest()),
        command=_command(config),
        results_dir=os.environ.get('MMSIAMESEIM_RESULTS_DIR'))


@pytest.fixture(autouse=True)
def restore_default_scope():
    """A Runner or ``init_default_scope`` makes its scope (mmpretrain, mmdet,
    mmseg) the current default scope for the rest of the process, and
    registries then build from that scope's registry.

    After each test, drop every scope made since the session started (by the
    test or by a module or session fixture) so that each test builds from its
    own library's registries.
    """
    yield
    for name in set(DefaultScope._instance_dict) - _SCOPES_AT_START:
        del DefaultScope._instance_dict[name]


@pytest.fixture(scope='session')
def parity_fixture():
    """One training step of the authors' implementation (see DESIGN §4)."""
    return torch.load(
        os.path.join(DATA, 'official_parity_tiny.pt'), weights_only=True)


@pytest.fixture(scope='session')
def smoke_imagenet(tmp_path_factory):
    """The tiny ImageNet / A / R / Sketch / C layouts from real Fashion-MNIST
    pixels (tools/dataset_converters/make_smoke_imagenet.py)."""
    from tests.helpers import load_tool
    tool = load_tool('dataset_converters/make_smoke_imagenet.py')
    out = tmp_path_factory.mktemp('smoke')
    assert tool.main([
        '--fashion-mnist',
        os.path.join(ROOT, 'data', 'fashion_mnist'), '--out',
        str(out)
    ]) == 0
    return out
