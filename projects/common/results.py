"""Results files: every run that produces a published figure writes one.

A results file is ``<home>/<name>.json``, its home (:data:`RESULTS_HOMES`)
the ``results/`` folder of the project that takes it, or ``docs/results/``
for the plugin's own test runs::

    {"meta": {"date": ..., "machine": ..., "command": ..., "commit": ...,
              "dirty": ...},
     "data": {...}}

``data`` is the tool's own. The tables in the README and the documentation
are rendered from these files (never typed by hand): a module that owns a
results file registers a renderer with :func:`results_table`, and the
markdown holds ``<!-- results:NAME -->`` ... ``<!-- /results:NAME -->``
blocks that the renderer fills.
"""
import datetime
import os
import os.path as osp
import platform
import shlex
import subprocess
import sys
from typing import Callable, Dict, Optional

from mmsiameseim.atomic_io import atomic_json, load_json

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))

# results file -> its folder, relative to the repository: the one list to
# extend when a tool publishes a new results file.
_DOWNSTREAM = 'projects/downstream_miniature/results'
RESULTS_HOMES: Dict[str, str] = {
    'accumulation': 'projects/accumulation/results',
    'accumulation_study': 'projects/accumulation/results',
    'benchmark_attention': 'projects/speed/results',
    'benchmark_checkpointing': 'projects/speed/results',
    'benchmark_pretrain': 'projects/speed/results',
    'benchmark_unigrad': 'projects/speed/results',
    'claim': 'projects/claim/results',
    'demo': 'projects/demo/results',
    'downstream_miniature': _DOWNSTREAM,
    'downstream_miniature_ablations': _DOWNSTREAM,
    'downstream_miniature_holdout': _DOWNSTREAM,
    'downstream_miniature_init_parts': _DOWNSTREAM,
    'downstream_miniature_init_parts_coco': _DOWNSTREAM,
    'downstream_miniature_lengths': _DOWNSTREAM,
    'fingerprints': 'projects/common/results',
    'gpu_check': 'projects/gpu_check/results',
    'pipeline': 'projects/speed/results',
    'preflight': 'projects/preflight/results',
    'side_by_side': 'projects/side_by_side/results',
    'table3': 'projects/table3/results',
    'tests_studies': 'projects/common/results',
    # the plugin's test runs: counts and the fault and person matrices
    'fault_matrix': 'docs/results',
    'person_matrix': 'docs/results',
    'tests': 'docs/results',
}

Renderer = Callable[[dict], str]
CellRenderer = Callable[[dict, str], str]
_TABLES: Dict[str, Renderer] = {}
_CELLS: Dict[str, CellRenderer] = {}


def git_output(*args: str, root: Optional[str] = None) -> Optional[str]:
    """``git -C ROOT ARGS``'s output without its trailing whitespace (the
    leading space of ``git status --porcelain``'s first line is kept), or
    None when git fails; ROOT defaults to the repository."""
    try:
        return subprocess.run(['git', '-C', root or REPO, *args],
                              check=True,
                              capture_output=True,
                              text=True).stdout.rstrip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _cpuinfo() -> Dict[str, str]:
    """The first processor's model name, family and model number from
    /proc/cpuinfo (empty where there is none)."""
    fields: Dict[str, str] = {}
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                key, _, value = line.partition(':')
                key = key.strip()
                if key in ('model name', 'cpu family', 'model') and \
                        key not in fields:
                    fields[key] = value.strip()
                if not line.strip() and fields:
                    break
    except OSError:
        pass
    return fields


def _cpu_name(fields: Dict[str, str]) -> str:
    return fields.get('model name') or platform.processor() \
        or platform.machine()


def machine() -> str:
    """CPU model, core count and accelerator, in one line."""
    text = f'{_cpu_name(_cpuinfo())}, {os.cpu_count()} cores'
    try:
        import torch
        if torch.cuda.is_available():
            text += f', {torch.cuda.device_count()} x ' \
                    f'{torch.cuda.get_device_name(0)}'
    except ImportError:
        pass
    return text


def host() -> dict:
    """What tells two hosts apart beyond :func:`machine`'s line (two CPU
    families of one maker read the same there): the CPU's model name,
    family and model number, cores, whether it has native bf16, and the
    torch version.

    A source of variation like the seed, recorded with every results file,
    never a gate.
    """
    fields = _cpuinfo()
    info = dict(
        cpu=_cpu_name(fields),
        cpu_family=fields.get('cpu family'),
        cpu_model=fields.get('model'),
        cores=os.cpu_count())
    try:
        import torch

        from mmsiameseim.precision import native_bf16
        info.update(native_bf16=native_bf16(), torch=torch.__version__)
    except ImportError:
        pass
    return info


def host_label(record: dict) -> str:
    """A record's host in a few words: its :func:`host` (``host``, or a
    downstream run's ``taken.host``) as ``CPU (family F model M), bf16 or
    no bf16``; for a record from before records carried it, its machine
    line and "no details"."""
    taken = record.get('taken') or {}
    info = record.get('host') or taken.get('host')
    if info:
        bf16 = {
            True: ', native bf16',
            False: ', no native bf16'
        }.get(info.get('native_bf16'), '')
        return (f'{info.get("cpu")} (family {info.get("cpu_family")} model '
                f'{info.get("cpu_model")}, {info.get("cores")} cores{bf16})')
    line = record.get('machine') or taken.get('machine')
    return f'{line} (no details recorded)' if line else 'host not recorded'


def hosts_line(records: list) -> str:
    """The runs per host: a host is a source of variation like the seed,
    so each table says where its runs were taken."""
    counts: Dict[str, int] = {}
    for record in records:
        label = host_label(record)
        counts[label] = counts.get(label, 0) + 1
    return 'Runs per host: ' + '; '.join(
        f'{label}: {n}' for label, n in sorted(counts.items())) + '.'


def run_meta(command: Optional[str] = None) -> dict:
    """Date, machine, command line and git commit of the running process,
    the machine's load (1-minute load average: other jobs sharing the cores
    slow timings down) and its :func:`host`."""
    status = git_output('status', '--porcelain', '--untracked-files=no')
    try:
        load = round(os.getloadavg()[0], 2)
    except OSError:
        load = None
    return dict(
        date=datetime.datetime.now().astimezone().isoformat(
            timespec='seconds'),
        machine=machine(),
        command=command
        or shlex.join([osp.relpath(sys.argv[0], REPO)] + sys.argv[1:]),
        commit=git_output('rev-parse', 'HEAD'),
        dirty=bool(status) if status is not None else None,
        dirty_paths=[line[3:]
                     for line in status.splitlines()] if status else [],
        load_avg_1min=load,
        host=host())


def results_home(name: str, root: str = REPO) -> str:
    """The folder of results file ``name`` (:data:`RESULTS_HOMES`) under
    ``root``; a name without a home is an error that says where to add
    it."""
    file = name.split(':')[0]
    if file not in RESULTS_HOMES:
        raise KeyError(f'results file {file!r} has no home: add it to '
                       'RESULTS_HOMES in projects/common/results.py '
                       '(its project\'s results/ folder)')
    return osp.join(root, RESULTS_HOMES[file])


def results_path(name: str,
                 results_dir: Optional[str] = None,
                 root: str = REPO) -> str:
    """The file of results ``name``: in ``results_dir`` where one is given
    (every name there, e.g. a test's or a smoke run's folder), else in its
    home under ``root``.

    A view of it, ``NAME:VIEW`` (another renderer of
    the same file), is the file NAME.
    """
    folder = results_dir or results_home(name, root)
    return osp.join(folder, f'{name.split(":")[0]}.json')


def published_results(root: str = REPO) -> Dict[str, str]:
    """{name: path} of every results file in its home under ``root``."""
    paths = {name: results_path(name, root=root) for name in RESULTS_HOMES}
    return {name: p for name, p in sorted(paths.items()) if osp.isfile(p)}


def write_results(name: str,
                  data: dict,
                  command: Optional[str] = None,
                  results_dir: Optional[str] = None) -> str:
    """Write ``data`` with :func:`run_meta` as the results file ``name``
    (atomically) in ``results_dir``, else in its home; returns its
    path."""
    path = results_path(name, results_dir)
    os.makedirs(osp.dirname(path), exist_ok=True)
    atomic_json(path, dict(meta=run_meta(command), data=data))
    return path


def read_results(name: str,
                 results_dir: Optional[str] = None,
                 root: str = REPO) -> dict:
    """The results file ``name`` (``meta`` and ``data``) of ``results_dir``,
    else of its home under ``root``; a missing file is an error that names
    it."""
    path = results_path(name, results_dir, root)
    results = load_json(path)
    if results is None:
        raise FileNotFoundError(f'no results file {path}: run the command '
                                'that writes it')
    return results


def results_table(name: str) -> Callable[[Renderer], Renderer]:
    """Register ``fn(results) -> markdown`` as the renderer of the
    ``<!-- results:NAME -->`` blocks of results file ``name`` (its kind, and
    for a study its smoke fingerprint, are in
    ``projects.common.fingerprints``)."""

    def register(fn: Renderer) -> Renderer:
        _TABLES[name] = fn
        return fn

    return register


def results_cell(name: str) -> Callable[[CellRenderer], CellRenderer]:
    """Register ``fn(results, key) -> str``: the "result" cell of a model-zoo
    row whose metafile entry says ``Reproduced In: NAME:KEY``."""

    def register(fn: CellRenderer) -> CellRenderer:
        _CELLS[name] = fn
        return fn

    return register


def table_renderers() -> Dict[str, Renderer]:
    return dict(_TABLES)


def cell_renderers() -> Dict[str, CellRenderer]:
    return dict(_CELLS)


def smoke_note(data: dict) -> list:
    """The lines a renderer adds under the table of a smoke run's data."""
    return [
        '', '**Smoke run: tiny subsets, the numbers are not '
        'meaningful.**'
    ] if data.get('smoke') else []
