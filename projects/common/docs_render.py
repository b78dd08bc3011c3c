"""Fill the markdown's generated blocks from results files and metafiles.

Two kinds of block, in ``README.md``, ``docs/**/*.md`` and
``configs/**/README.md``::

    <!-- results:NAME -->
    (the registered renderer's markdown for results file NAME, then a
    one-line provenance footer)
    <!-- /results:NAME -->

    <!-- metafile:configs/pretrain/metafile.yml -->
    (the model-zoo table of that metafile: config, paper row, result, log,
    weights)
    <!-- /metafile -->

The footer names the results file, its date, machine, commit and command.
A study's block (``projects.common.fingerprints``) says that it was not
retaken only on evidence: when its recorded smoke fingerprint carries a
note of what changed since the results were taken, or when none is
recorded for them. Timings and the test run's files are what they say, a
measurement of that commit (on that machine). :func:`check` lists every block
that differs from what :func:`render_text` makes of it, every block without
a results file and every unknown NAME;
``projects/common/tools/render_results.py`` is the
command line.
"""
import glob
import importlib
import os
import os.path as osp
import re
from typing import Dict, List, Optional, Tuple

from mmsiameseim.atomic_io import atomic_write
from projects.common import fingerprints
from projects.common.config_values import stale_records
from projects.common.results import (REPO, cell_renderers, read_results,
                                     results_path, table_renderers)

# The modules that register renderers (``results_table`` /
# ``results_cell``), each in its study's folder: the one list to extend when
# a tool publishes a new results file.
RENDERER_MODULES = ('projects.demo.tables', 'projects.claim.tables',
                    'projects.downstream_miniature.tables',
                    'projects.side_by_side.tables', 'projects.table3.tables',
                    'projects.accumulation.tables', 'projects.speed.tables',
                    'projects.speed.pipeline', 'projects.gpu_check',
                    'projects.preflight', 'projects.common.pytest_runs')

# Markers stand alone on their lines (a marker quoted in running text or
# inline code is no block).
RESULTS_BLOCK = re.compile(
    r'^(?P<open><!-- results:(?P<name>[^ ]+) -->)$(?P<body>.*?)'
    r'^(?P<close><!-- /results:(?P=name) -->)$', re.S | re.M)
METAFILE_BLOCK = re.compile(
    r'^(?P<open><!-- metafile:(?P<name>[^ ]+) -->)$(?P<body>.*?)'
    r'^(?P<close><!-- /metafile -->)$', re.S | re.M)
# An opening marker whose closing marker is missing.
RESULTS_OPEN = re.compile(r'^<!-- results:([^ ]+) -->$', re.M)
METAFILE_OPEN = re.compile(r'^<!-- metafile:([^ ]+) -->$', re.M)


class BlockError(Exception):
    """A block that cannot be rendered (the message says why)."""


def load_renderers() -> None:
    """Import every module of :data:`RENDERER_MODULES`."""
    for module in RENDERER_MODULES:
        importlib.import_module(module)


def markdown_files(root: str) -> List[str]:
    """README.md, docs/**/*.md (not the generated docs/_build,
    docs/model_zoo, docs/projects), configs/**/README.md and
    projects/**/README.md under ``root``, sorted."""
    files = [osp.join(root, 'README.md')]
    files += glob.glob(osp.join(root, 'docs', '**', '*.md'), recursive=True)
    for top in ('configs', 'projects'):
        files += glob.glob(
            osp.join(root, top, '**', 'README.md'), recursive=True)
    generated = tuple(
        osp.join(root, 'docs', name) + os.sep
        for name in ('_build', 'model_zoo', 'projects'))
    return sorted(
        f for f in set(files) if osp.isfile(f) and not f.startswith(generated))


# (results name, file, its mtime and size) -> stale_records of that version
# of the file: a page renders several blocks of one results file, and the
# claim's check builds the study's scorer
_STALE: Dict[tuple, Optional[Tuple[List[str], int]]] = {}


def _stale_records(file: str, path: str,
                   data: dict) -> Optional[Tuple[List[str], int]]:
    """:func:`stale_records` of results file ``file`` (read from ``path``),
    computed once per version of the file."""
    if not osp.isfile(path):
        return stale_records(file, data)
    stat = os.stat(path)
    key = (file, path, stat.st_mtime_ns, stat.st_size)
    if key not in _STALE:
        _STALE[key] = stale_records(file, data)
    return _STALE[key]


def footer(name: str,
           results: dict,
           md_path: str,
           root: str,
           results_dir: Optional[str] = None) -> str:
    """One line: where the figures come from and, for a study, whether its
    smoke fingerprint says they may have changed since."""
    meta = results.get('meta', {})
    path = results_path(name, results_dir, root)
    link = osp.relpath(path, osp.dirname(md_path))
    shown = osp.relpath(path, root)
    commit = meta.get('commit')
    short = commit[:7] if commit else 'unknown'
    date = str(meta.get('date', 'unknown date'))[:16].replace('T', ' ')
    code = fingerprints.uncommitted_code(meta)
    if code is None:
        dirty = ' (uncommitted changes)' if meta.get('dirty') else ''
    else:
        dirty = f' (with uncommitted changes to {", ".join(code)})' \
            if code else ''
    load = meta.get('load_avg_1min')
    machine = meta.get(
        'machine', '?') + (f' (load {load:.1f})' if load is not None else '')
    text = (f'From [{shown}]({link}): {date}, {machine}, '
            f'commit {short}{dirty}, `{meta.get("command", "?")}`.')
    if fingerprints.results_kind(name) != 'study':
        return f'<sub>{text}</sub>'
    file = name.split(':')[0]
    stale = _stale_records(file, path, results.get('data') or {})
    if stale is not None:
        keys, total = stale
        if keys:
            text += (f' **{len(keys)} of {total} records were made from '
                     'other config values (or another plugin version) than '
                     f'this code\'s, first {keys[0]}: retake them.**')
    else:
        entry = fingerprints.load(results_dir, root).get(file)
        note = entry and fingerprints.changed_note(entry)
        if entry is None or entry.get('results_commit') != commit:
            text += ' **No smoke fingerprint recorded for these results: ' \
                    'they may be stale.**'
        elif note:
            text += f' **Not retaken since {short}: {note}.**'
    return f'<sub>{text}</sub>'


def render_results_block(name: str,
                         md_path: str,
                         root: str,
                         results_dir: Optional[str] = None) -> str:
    """The body of a ``<!-- results:NAME -->`` block."""
    renderers = table_renderers()
    if name not in renderers:
        raise BlockError(
            f'unknown results name {name!r}: no renderer registered for it '
            f'(registered: {sorted(renderers)}; renderer modules: '
            f'{list(RENDERER_MODULES)})')
    try:
        fingerprints.results_kind(name)
    except KeyError as e:
        raise BlockError(e.args[0]) from None
    path = results_path(name, results_dir, root)
    if not osp.isfile(path):
        raise BlockError(
            f'no results file {osp.relpath(path, root)}'
            ': run the command that writes it (see `make results`)')
    results = read_results(name, results_dir, root)
    table = renderers[name](results).strip('\n')
    return '\n' + table + '\n\n' + footer(name, results, md_path, root,
                                          results_dir) + '\n'


def _metafile_cell_result(model: dict, root: str,
                          results_dir: Optional[str]) -> str:
    ref = model.get('Metadata', {}).get('Reproduced In')
    if not ref:
        return 'not run here'
    name, _, key = str(ref).partition(':')
    cells = cell_renderers()
    if name not in cells:
        raise BlockError(f'{model["Name"]}: Reproduced In {ref!r}: no result '
                         f'cell registered for {name!r} (registered: '
                         f'{sorted(cells)})')
    if not osp.isfile(results_path(name, results_dir, root)):
        return f'not run yet (`{name}`)'
    return cells[name](read_results(name, results_dir, root), key)


def _paper_cell(model: dict) -> str:
    row = model.get('Metadata', {}).get('Paper Row', '-')
    metrics = [
        f'{k} {v}' for res in model.get('Results') or []
        for k, v in res.get('Metrics', {}).items()
    ]
    return f'{row}: {", ".join(metrics)}' if metrics else str(row)


def _weights_cell(model: dict) -> str:
    if model.get('Weights'):
        return f'[weights]({model["Weights"]})'
    conv = model.get('Converted From')
    if conv:
        cmd = model.get('Metadata', {}).get('Converter', '')
        return f'[authors\' weights]({conv["Weights"]})' + (f', then `{cmd}`'
                                                            if cmd else '')
    return '-'


def render_metafile_block(metafile: str,
                          md_path: str,
                          root: str,
                          results_dir: Optional[str] = None) -> str:
    """The body of a ``<!-- metafile:PATH -->`` block: one row per model
    of the metafile (PATH relative to the repository root)."""
    import yaml
    path = osp.join(root, metafile)
    if not osp.isfile(path):
        raise BlockError(f'no metafile {metafile}')
    with open(path) as f:
        meta = yaml.safe_load(f) or {}
    if not meta.get('Models'):
        raise BlockError(f'{metafile}: no Models')
    here = osp.dirname(md_path)
    lines = [
        '| config | paper row | result | log | weights |',
        '|---|---|---|---|---|'
    ]
    for model in meta['Models']:
        config = model.get('Config')
        if not config:
            raise BlockError(f'{metafile}: {model.get("Name")}: no Config')
        link = osp.relpath(osp.join(root, config), here)
        log = model.get('Metadata', {}).get('Log')
        cells = [
            f'[{model["Name"]}]({link})',
            _paper_cell(model),
            _metafile_cell_result(model, root, results_dir),
            f'[log]({log})' if log else '-',
            _weights_cell(model)
        ]
        lines.append('| ' + ' | '.join(c.replace('|', '\\|')
                                       for c in cells) + ' |')
    return '\n' + '\n'.join(lines) + '\n\n' + \
        f'<sub>Rendered from [{metafile}]' \
        f'({osp.relpath(path, here)}).</sub>\n'


def render_text(text: str,
                md_path: str,
                root: str,
                results_dir: Optional[str] = None) -> Tuple[str, List[str]]:
    """``text`` with every block filled, and the problems of the blocks that
    could not be (each kept as it was)."""
    problems = []
    rel = osp.relpath(md_path, root)
    for opener, whole in ((RESULTS_OPEN, RESULTS_BLOCK), (METAFILE_OPEN,
                                                          METAFILE_BLOCK)):
        closed = {m.start('open') for m in whole.finditer(text)}
        for m in opener.finditer(text):
            if m.start() not in closed:
                problems.append(f'{rel}: {m.group(0)} has no closing marker')

    def fill(render):

        def sub(m):
            try:
                body = render(m.group('name'))
            except BlockError as e:
                problems.append(f'{rel}: {m.group("open")}: {e}')
                return m.group(0)
            return m.group('open') + body + m.group('close')

        return sub

    text = RESULTS_BLOCK.sub(
        fill(lambda name: render_results_block(name, md_path, root, results_dir
                                               )), text)
    text = METAFILE_BLOCK.sub(
        fill(lambda name: render_metafile_block(name, md_path, root,
                                                results_dir)), text)
    return text, problems


def render(root: str = REPO,
           write: bool = True,
           results_dir: Optional[str] = None
           ) -> Tuple[Dict[str, List[str]], List[str]]:
    """Render every block of every markdown file under ``root``.

    Returns:
        tuple: {file: names of its blocks that changed} (written when
        ``write``) and the problems (blocks without a results file,
        unknown names, unclosed markers).
    """
    load_renderers()
    changed, problems = {}, []
    for md in markdown_files(root):
        with open(md) as f:
            old = f.read()
        new, probs = render_text(old, md, root, results_dir)
        problems += probs
        if new != old:
            rel = osp.relpath(md, root)
            changed[rel] = _changed_blocks(old, new)
            if write:
                atomic_write(md, new)
    return changed, problems


def _changed_blocks(old: str, new: str) -> List[str]:
    names = []
    for pattern in (RESULTS_BLOCK, METAFILE_BLOCK):
        before = [m.group(0) for m in pattern.finditer(old)]
        after = [m.group(0) for m in pattern.finditer(new)]
        names += [
            m.group('open') for m, a in zip(pattern.finditer(new), after)
            if a not in before
        ]
    return names


def check(root: str = REPO, results_dir: Optional[str] = None) -> List[str]:
    """Every block that differs from its rendering, has no results file or
    names an unknown results file (one line each); empty when all agree."""
    changed, problems = render(root, False, results_dir)
    out = [
        f'{md}: {block} differs from what its source renders to (run '
        'python projects/common/tools/render_results.py)'
        for md, blocks in changed.items() for block in blocks
    ]
    return out + problems
