"""The renderers of the published results files (``docs/results/*.json``).

Each ``results_table(NAME)`` turns the results file NAME into the markdown
of its ``<!-- results:NAME -->`` blocks (whether they are current is the
business of ``mmsiameseim_lab.fingerprints``). Each ``results_cell(NAME)``
gives the "result" cell of a model-zoo row whose metafile entry says
``Reproduced In: NAME:KEY``. The renderer modules are listed in
``mmsiameseim_lab.docs_render.RENDERER_MODULES``.
"""
from mmsiameseim_lab.benchmark.accumulation import table as accumulation_rows
from mmsiameseim_lab.benchmark.checkpointing import table as checkpointing_rows
from mmsiameseim_lab.benchmark.report import (format_attention_table,
                                              format_table,
                                              format_unigrad_table)
from mmsiameseim_lab.demo.seed_table import format_seed_table
from mmsiameseim_lab.results import results_cell, results_table
from mmsiameseim_lab.table3 import COMPARISONS


def _smoke_note(data: dict) -> list:
    return [
        '', '**Smoke run: tiny subsets, the numbers are not '
        'meaningful.**'
    ] if data.get('smoke') else []


@results_table('demo')
def demo_table(results: dict) -> str:
    """``make demo``: kNN, linear probe and 1 % few-shot top-1 per row,
    pretraining wall time and images/s, raw pixels, the total time."""
    data = results['data']
    lines = [
        '| method | kNN top-1 | linear probe top-1 | 1 % few-shot top-1 | '
        'pretraining wall time | images/s |', '|---|---|---|---|---|---|'
    ]
    for r in data['rows']:
        wall = '-' if r.get('pretrain_wall_s') is None else \
            f'{r["pretrain_wall_s"] / 60:.1f} min' + \
            ' (resumed)' * bool(r.get('resumed'))
        ips = '-' if not r.get('images_per_s') else \
            f'{r["images_per_s"]:.0f}'
        lines.append(f'| {r["method"]} | {r["knn"]:.2f} | {r["linear"]:.2f} '
                     f'| {r["fewshot"]:.2f} | {wall} | {ips} |')
    lines.append(f'| raw pixels (mean-centred) | {data["pixel_knn"]:.2f} | '
                 '- | - | - | - |')
    lines += [
        '', f'Whole demo: {data["wall_s"] / 60:.1f} min (pretraining '
        'and evaluation).'
    ] + _smoke_note(data)
    return '\n'.join(lines)


@results_cell('demo')
def demo_cell(results: dict, key: str) -> str:
    """KNN / linear / few-shot of the demo row ``key``."""
    rows = {r['method']: r for r in results['data']['rows']}
    if key not in rows:
        raise KeyError(f'demo results: no row {key!r} (rows: {sorted(rows)})')
    r = rows[key]
    return (f'Fashion-MNIST (demo): kNN {r["knn"]:.2f}, linear '
            f'{r["linear"]:.2f}, 1 % few-shot {r["fewshot"]:.2f}')


@results_table('side_by_side:summary')
def side_by_side_summary(results: dict) -> str:
    """The README's part of ``tools/side_by_side.py``: the mean and spread
    of each side, without the per-run rows."""
    full = side_by_side_table(results)
    return full.split('\n\nPer run:')[0]


@results_table('side_by_side')
def side_by_side_table(results: dict) -> str:
    """``tools/side_by_side.py``: ours and the authors' code, mean and spread
    over seeds, then every run."""
    data = results['data']
    names = dict(ours='ours (mmsiameseim)', authors='the authors\' code')
    args = data.get('args', {})
    notes = [
        f'Budget per run: {args.get("train_images", "?")} training '
        f'images x {args.get("epochs", "?")} epoch(s) at batch '
        f'{data.get("settings", {}).get("batch", "?")}.'
    ]
    return format_seed_table(data['runs'], names, notes).rstrip('\n')


def _claim_cells(stats: dict, metrics) -> list:
    """'mean ± sd (min-max)' of each metric's stats; the mean alone for one
    run, '-' for none."""
    cells = []
    for m in metrics:
        st = stats.get(m)
        if not st:
            cells.append('-')
        elif st['sd'] is None:
            cells.append(f'{st["mean"]:.2f}')
        else:
            cells.append(f'{st["mean"]:.2f} ± {st["sd"]:.2f} '
                         f'({st["min"]:.2f}-{st["max"]:.2f})')
    return cells


def _claim_main_rows(data: dict) -> list:
    """The table of every method's mean and spread, their initial weights
    and raw pixels."""
    from mmsiameseim_lab.claim import METRICS
    head = ('method', 'seeds', 'kNN top-1', 'linear probe top-1',
            '1 % few-shot top-1', 'dense mIoU', 'dense per-patch acc.')
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    summary = data['summary']
    for key, name in (('scores', '**{}**'), ('initial_weights',
                                             '{} initial weights')):
        for method in data['methods']:
            if method in summary:
                s = summary[method]
                seeds = ','.join(str(x) for x in s['seeds'])
                lines.append('| ' + ' | '.join([name.format(method), seeds] +
                                               _claim_cells(s[key], METRICS)) +
                             ' |')
    raw = data['raw_pixels']
    lines.append(f'| raw pixels | - | {raw["knn"]:.2f} | - | - | '
                 f'{raw["dense_miou"]:.2f} | {raw["dense_accuracy"]:.2f} |')
    return lines + [
        '', 'mean ± sample standard deviation (min-max) over the seeds; '
        'initial weights: each run before its first step.'
    ]


@results_table('claim:summary')
def claim_summary(results: dict) -> str:
    """The README's part of ``tools/claim_study.py``: the main table and
    the reading."""
    from mmsiameseim_lab.claim import claim_reading
    data = results['data']
    lines = _claim_main_rows(data) + ['']
    lines += [f'* {x}' for x in claim_reading(data, floors=False)]
    return '\n'.join(lines + _smoke_note(data))


def _past_pixels(data: dict) -> list:
    """Per method, written from the records: the first scored epoch whose
    kNN passes raw pixels', or that none does."""
    raw = data['raw_pixels']['knn']
    out = []
    for method in data['methods']:
        rows = sorted((r for r in data['records'] if r['method'] == method),
                      key=lambda r: r['epochs'])
        if not rows:
            continue
        past = [r for r in rows if r['knn'] > raw]
        best = max(rows, key=lambda r: r['knn'])
        if past:
            out.append(f'{method}: kNN first passes raw pixels ({raw:.2f}) '
                       f'at epoch {past[0]["epochs"]} ({past[0]["knn"]:.2f}); '
                       f'best {best["knn"]:.2f} at epoch {best["epochs"]}.')
        else:
            out.append(f'{method}: kNN stays below raw pixels ({raw:.2f}) at '
                       f'every scored epoch; best {best["knn"]:.2f} at epoch '
                       f'{best["epochs"]}.')
    return out


@results_table('claim_token_map:summary')
def claim_token_map_summary(results: dict) -> str:
    """The README's line on a curve scored under another feature: per
    method, where kNN passes raw pixels."""
    data = results['data']
    return '\n'.join([f'* {x}'
                      for x in _past_pixels(data)] + _smoke_note(data))


@results_table('claim_holdout')
@results_table('claim_token_map')
@results_table('claim_token_map_holdout')
@results_table('claim_token_map_norm_holdout')
def claim_records_table(results: dict) -> str:
    """A results file of ``tools/claim_study.py`` as its records, one row
    per scored checkpoint, beside raw pixels: the held-out scores
    (``--holdout N``, for choosing settings) and the curve under another
    feature (``--results-name``)."""
    data = results['data']
    raw = data['raw_pixels']
    lines = [
        '| run | epoch | kNN top-1 | 1 % few-shot top-1 | linear probe top-1 '
        '| dense mIoU |', '|---|---|---|---|---|---|'
    ]

    methods = list(data['methods'])

    def order(r):  # the study's method order, then run and epoch
        rank = methods.index(r['method']) if r['method'] in methods else \
            len(methods)
        return rank, r['key'].split('@')[0], r['epochs']

    for r in sorted(data['records'], key=order):
        lin = '-' if r.get('linear') is None else f'{r["linear"]:.2f}'
        lines.append(f'| {r["key"].split("@")[0]} | {r["epochs"]} | '
                     f'{r["knn"]:.2f} | {r["fewshot"]:.2f} | {lin} | '
                     f'{r["dense_miou"]:.2f} |')
    lines.append(f'| raw pixels | - | {raw["knn"]:.2f} | - | - | '
                 f'{raw["dense_miou"]:.2f} |')
    if data.get('holdout'):
        lines += [
            '', f'Scored on {data["holdout"]} held-out training images (the '
            'test images are not used); the other metrics\' images are '
            'drawn from the rest of the training set.'
        ]
    lines += [''] + [f'* {x}' for x in _past_pixels(data)]
    feature = [x for x in data['protocol'] if x.startswith('* Feature:')]
    methods = {r['method'] for r in data['records']}
    if feature:  # the features of the methods shown
        parts = feature[0][len('* Feature: '):].rstrip('.').split('; ')
        lines += [
            '', 'Feature: ' +
            '; '.join(p for p in parts if p.split(':')[0] in methods) + '.'
        ]
    return '\n'.join(lines + _smoke_note(data))


@results_table('claim')
def claim_table(results: dict) -> str:
    """``tools/claim_study.py``: per method the mean and spread over seeds
    of every score, the floors, the paper's orderings against ours, and
    the learning curve."""
    from mmsiameseim_lab.claim import claim_reading, orderings
    data = results['data']
    summary = data['summary']
    raw = data['raw_pixels']
    lines = _claim_main_rows(data) + [
        '', '| paper column | comparison | paper | ours (difference of means) '
        '| verdict |', '|---|---|---|---|---|'
    ]
    for o in orderings(summary):
        se = '' if o['se'] is None else f' ± {o["se"]:.2f}'
        lines.append(f'| {o["column"]} | {o["a"]} - {o["b"]} | '
                     f'{o["paper"]:+.1f} | {o["ours"]:+.2f}{se} | '
                     f'{o["verdict"]} |')
    lines += [
        '', 'ours: difference of the means ± its standard error over the '
        'seeds; "holds" / "reversed": a two-sided Welch t-test at 95 % '
        'finds the difference, with the paper\'s sign / the other sign '
        '(with two seeds a side, only large gaps pass it).'
    ]
    curve = [r for r in data['records'] if r['curve']]
    if curve:
        epochs = sorted({r['epochs'] for r in curve})
        lines += [
            '', f'Learning curve (seed {data.get("curve_seed", 0)}): the '
            'epoch checkpoints of one run per method, its cosine schedule '
            'ending at its last epoch; kNN top-1 / dense mIoU:', '',
            '| method | ' + ' | '.join(f'{e} ep.' for e in epochs) + ' |',
            '|---|' + '---|' * len(epochs)
        ]
        for method in data['methods']:
            by = {r['epochs']: r for r in curve if r['method'] == method}
            if by:
                lines.append(f'| {method} | ' + ' | '.join(
                    f'{by[e]["knn"]:.2f} / {by[e]["dense_miou"]:.2f}' if e in
                    by else '-' for e in epochs) + ' |')
        lines.append('| raw pixels | ' +
                     ' | '.join(f'{raw["knn"]:.2f} / {raw["dense_miou"]:.2f}'
                                for _ in epochs) + ' |')
    lines += ['', 'Reading (written from the numbers above):', '']
    lines += [f'* {x}' for x in claim_reading(data)]
    bf16 = 'native bf16' if data.get('native_bf16') else 'no native bf16 ' \
        '(fp32)'
    lines += [
        '', f'Pretraining: {data["epochs"]} epoch(s) per table run; '
        f'the CPU had {bf16}.'
    ]
    return '\n'.join(lines + _smoke_note(data))


@results_table('table3')
def table3_table(results: dict) -> str:
    """``tools/ablation_table3.py``: each row's switches, our miniature's
    scores and the paper's."""
    data = results['data']
    yes = lambda v: 'yes' if v else ''  # noqa: E731
    lines = [
        f'Each row: {data["settings"]}.', '',
        '| row | target | different views | colour aug | mask | BN/LN | '
        'loss norm | loss | kNN | LIN | few-shot | wall time | paper LIN | '
        'paper AP^b | paper AP^m |', '|' + '---|' * 15
    ]
    for row, res in data['results'].items():
        f, p = data['factors'][row], data['paper'].get(row, {})
        lines.append(
            f'| ({row}) | {f["target"]} | {yes(f["views"] == "different")} | '
            f'{yes(f["colour"])} | {f["mask"]} | {f["norm"]} | '
            f'{f["loss_norm"]} | {f["loss"]} | {res["knn"]:.2f} | '
            f'{res["linear"]:.2f} | {res["fewshot"]:.2f} | '
            f'{data["walls"][row]["total_s"] / 60:.1f} min | '
            f'{p.get("lin", "-")} | {p.get("ap_box", "-")} | '
            f'{p.get("ap_mask", "-")} |')
    if data.get('floor'):
        row, res = data['floor']
        lines += [
            '', f'Floor: row ({row})\'s run at its own initial weights:'
            f' kNN {res["knn"]:.2f}, LIN {res["linear"]:.2f}, few-shot '
            f'{res["fewshot"]:.2f}.'
        ]
    total = sum(w['total_s'] for w in data['walls'].values())
    lines += [
        '', f'Total wall time of the rows: {total / 60:.1f} min '
        '(pretraining + evaluation).', '',
        '| rows | factor | paper LIN | ours LIN | ours kNN | holds? |',
        '|---|---|---|---|---|---|'
    ]
    res, paper = data['results'], data['paper']
    for x, y, what in COMPARISONS:
        if x in res and y in res and x in paper and y in paper:
            dp = paper[x]['lin'] - paper[y]['lin']
            dl = res[x]['linear'] - res[y]['linear']
            dk = res[x]['knn'] - res[y]['knn']
            holds = 'yes' if (dl > 0) == (dp > 0) else 'no'
            lines.append(f'| ({x}) - ({y}) | {what} | {dp:+.1f} | {dl:+.2f} '
                         f'| {dk:+.2f} | {holds} |')
    return '\n'.join(lines + _smoke_note(data))


@results_cell('table3')
def table3_cell(results: dict, key: str) -> str:
    """Our miniature's kNN / linear probe of Table 3 row ``key``."""
    res = results['data']['results']
    if key not in res:
        raise KeyError(f'table3 results: no row {key!r} (rows: {sorted(res)})')
    return (f'miniature (Fashion-MNIST): kNN {res[key]["knn"]:.2f}, LIN '
            f'{res[key]["linear"]:.2f}')


@results_table('benchmark_pretrain')
def benchmark_pretrain_table(results: dict) -> str:
    data = dict(results['data'])
    return format_table(data.pop('rows'), data)


@results_table('benchmark_unigrad')
def benchmark_unigrad_table(results: dict) -> str:
    data = results['data']
    return format_unigrad_table(data['rows'], data.get('step_seconds'),
                                data.get('batch'))


@results_table('benchmark_attention')
def benchmark_attention_table(results: dict) -> str:
    data = results['data']
    s = data.get('settings', {})
    head = f'ViT-{s["arch"].upper()}, batch {s["batch"]}, ' \
        f'{s["img_size"]} px, patch {s["patch_size"]}, {s["masked"]} ' \
        f'masked patches; median of {s["repeats"]}.\n\n' if s else ''
    return head + format_attention_table(data['rows'])


@results_table('tests')
def tests_table(results: dict) -> str:
    """The test run's counts and wall time (``tests/conftest.py``)."""
    d = results['data']
    return '\n'.join([
        '| selection | passed | failed | errors | skipped | deselected | '
        'wall time |', '|---|---|---|---|---|---|---|',
        f'| `pytest {" ".join(d["args"])}` (`-m "{d["markexpr"]}"`) | '
        f'{d["passed"]} | {d["failed"]} | {d["errors"]} | {d["skipped"]} | '
        f'{d["deselected"]} | {d["duration_s"] / 60:.1f} min |'
    ])


def _matrix_table(results: dict, key: str, heading: str) -> str:
    d = results['data']
    columns = d[f'{key}s']
    lines = [
        f'| entry point | {heading} | behaviour | test |', '|---|---|---|---|'
    ]
    order = {k: i for i, k in enumerate(d['entries'])}
    column_order = {k: i for i, k in enumerate(columns)}

    def place(c):
        return order[c['entry']], column_order[c[key]], c['test']

    for c in sorted(d['cells'], key=place):
        cells = [
            d['entries'][c['entry']], columns[c[key]], c['behaviour'],
            f'`{c["test"]}`'
        ]
        lines.append('| ' + ' | '.join(
            x.replace('|', '\\|').replace('\n', ' ') for x in cells) + ' |')
    return '\n'.join(lines)


@results_table('fault_matrix')
def fault_matrix_table(results: dict) -> str:
    """Entry point x fault -> behaviour, and the test that shows it."""
    return _matrix_table(results, 'fault', 'fault')


@results_table('person_matrix')
def person_matrix_table(results: dict) -> str:
    """Entry point x a person's mistake -> behaviour, and the test that
    shows it."""
    return _matrix_table(results, 'mistake', 'mistake')


@results_table('accumulation')
def accumulation_table(results: dict) -> str:
    """Exact and plain gradient accumulation against the whole batch's
    gradient (``tools/benchmark_accumulation.py``)."""
    return accumulation_rows(results['data']['rows'])


@results_table('benchmark_checkpointing')
def checkpointing_table(results: dict) -> str:
    """Activation checkpointing's memory and time at ViT-B / ViT-L, and the
    memory model against the measured step
    (``tools/benchmark_checkpointing.py``)."""
    data = results['data']
    lines = [checkpointing_rows(data['rows']), '']
    for arch, r in data['savings'].items():
        lines.append(
            f'ViT-{arch.upper()}: checkpointing keeps '
            f'{100 * r["activations_ratio"]:.0f} % of the activations per '
            f'image at {r["time_ratio"]:.2f}x the step time.')
    return '\n'.join(lines)


# the settings of configs/demo/accumulation_study.py, in its method order
_ACCUMULATION_SETTINGS = {
    'siameseim': 'batch 64 (the demo)',
    'siameseim-microbatch4': '4 x 16, exact (`model.micro_batches=4`)',
    'siameseim-accum4': '4 x 16, plain (`accumulative_counts=4`)',
    'siameseim-bs16-lr-scaled': 'batch 16, lr / 4',
}


def _accumulation_reading(data: dict) -> list:
    """Each setting against batch 64, metric by metric: the difference of
    the means and whether a two-sided Welch t-test at 95 % finds it."""
    from mmsiameseim_lab.claim import METRIC_NAMES, welch_threshold
    summary = data['summary']
    base = summary.get('siameseim', {}).get('scores')
    out = []
    for method in data['methods'][1:]:
        scores = summary.get(method, {}).get('scores')
        if not base or not scores:
            continue
        found, within = [], []
        for m in ('knn', 'linear', 'fewshot', 'dense_miou'):
            a, b = scores.get(m), base.get(m)
            if not a or not b or a['sd'] is None or b['sd'] is None:
                continue
            diff = a['mean'] - b['mean']
            text = f'{METRIC_NAMES[m]} {diff:+.2f}'
            (found
             if abs(diff) > welch_threshold(a, b) else within).append(text)
        name = _ACCUMULATION_SETTINGS.get(method, method)
        line = f'{name} against batch 64: '
        line += ('differs on ' +
                 ', '.join(found) if found else 'no difference the test finds')
        if within:
            line += '; within the seed spread: ' + ', '.join(within)
        out.append(line + '.')
    return out


@results_table('accumulation_study')
def accumulation_study_table(results: dict) -> str:
    """The demo's batch of 64 against three ways of training it on a
    quarter of the images at a time (``configs/demo/accumulation_study.py``
    run by ``tools/claim_study.py``): mean and spread over the seeds, the
    pretraining time, and each setting against batch 64."""
    from mmsiameseim_lab.claim import METRICS
    data = results['data']
    summary = data['summary']
    head = ('setting', 'seeds', 'kNN top-1', 'linear probe top-1',
            '1 % few-shot top-1', 'dense mIoU', 'pretraining (s)')
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for method in data['methods']:
        if method not in summary:
            continue
        s = summary[method]
        walls = [
            r['pretrain_wall_s'] for r in data['records']
            if r['method'] == method and r['table']
        ]
        lines.append('| ' + ' | '.join([
            _ACCUMULATION_SETTINGS.get(method, method), ','.join(
                str(x) for x in s['seeds'])
        ] + _claim_cells(s['scores'], METRICS[:4]) +
                                       [f'{sum(walls) / len(walls):.0f}']) +
                     ' |')
    lines += [
        '', 'mean ± sample standard deviation (min-max) over the seeds; '
        'pretraining: the mean wall time of one epoch on the 2-core CPU.', ''
    ]
    lines += [f'* {x}' for x in _accumulation_reading(data)]
    return '\n'.join(lines + _smoke_note(data))


@results_cell('accumulation_study')
def accumulation_study_cell(results: dict, key: str) -> str:
    """Mean kNN / linear / few-shot over the seeds of the study's method
    ``key``."""
    summary = results['data']['summary']
    if key not in summary:
        raise KeyError(f'accumulation_study results: no method {key!r} '
                       f'(methods: {sorted(summary)})')
    s = summary[key]['scores']
    n = len(summary[key]['seeds'])
    return (f'Fashion-MNIST, mean of {n} seeds: kNN {s["knn"]["mean"]:.2f}, '
            f'linear {s["linear"]["mean"]:.2f}, 1 % few-shot '
            f'{s["fewshot"]["mean"]:.2f}')


@results_table('code_trace')
def code_trace_table(results: dict) -> str:
    """``tools/trace_step.py``: the plugin files one training step runs,
    per snapshot (before / after a refactor), and their lines."""
    snaps = results['data']['snapshots']
    lines = [
        '| snapshot | commit | files | lines | code lines |',
        '|---|---|---|---|---|'
    ]
    for label, s in snaps.items():
        lines.append(f'| {label} | {s["commit"][:7]} | {s["total_files"]} | '
                     f'{s["total_lines"]} | {s["total_code_lines"]} |')
    for label, s in snaps.items():
        lines += [
            '', f'{label} ({s["commit"][:7]}), file by file (lines / code '
            'lines):', ''
        ]
        lines.append('; '.join(f'`{f["path"]}` {f["lines"]} / '
                               f'{f["code_lines"]}' for f in s['files']) + '.')
    config = next(iter(snaps.values()))['config']
    lines += [
        '', f'Traced: two images of `{config}` through its dataset, the '
        'collate, the data preprocessor and `loss` (code lines: not blank, '
        'not a comment, not a docstring).'
    ]
    return '\n'.join(lines)


@results_table('refactor_check')
def refactor_check_table(results: dict) -> str:
    """``tools/check_refactor.py``: the smoke demo's scores and the parity
    fixture's numbers at two commits, and whether each is bit-identical."""
    data = results['data']
    a, b = data['before'], data['after']
    lines = [
        f'| number | before ({a["commit"][:7]}) | after ({b["commit"][:7]}) |',
        '|---|---|---|'
    ]
    for method, scores in a['smoke_demo']['scores'].items():
        for metric, value in scores.items():
            other = b['smoke_demo']['scores'].get(method, {}).get(metric)
            lines.append(f'| smoke demo: {method}, {metric} | {value!r} | '
                         f'{other!r} |')
    losses = a['smoke_demo']['losses'], b['smoke_demo']['losses']
    lines.append(f'| smoke demo: training losses logged | {len(losses[0])}, '
                 f'last {losses[0][-1]!r} | {len(losses[1])}, last '
                 f'{losses[1][-1]!r} |')
    for key, value in a['parity'].items():
        lines.append(f'| parity fixture: {key} | {value!r} | '
                     f'{b["parity"].get(key)!r} |')
    lines.append('| smoke demo: console lines (not compared) | '
                 f'{a["smoke_demo"].get("console_lines", "-")} | '
                 f'{b["smoke_demo"].get("console_lines", "-")} |')
    same = data['identical']
    lines += [
        '', 'Bit-identical: ' +
        ', '.join(f'{k.replace("_", " ")} {"yes" if v else "**no**"}'
                  for k, v in same.items()) + '.'
    ]
    return '\n'.join(lines)
