"""The claim study's published tables (docs/results/claim*.json): the main
table of every method's scores over the seeds, the paper's orderings, the
learning curve and the readings; the records of the held-out and
other-feature runs."""
from ..metrics import METRICS, headings, stats_cells
from ..results import results_table, smoke_note
from .study import claim_reading, orderings


def _claim_main_rows(data: dict) -> list:
    """The table of every method's mean and spread, their initial weights
    and raw pixels."""
    head = ('method', 'seeds', *headings(METRICS))
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    summary = data['summary']
    for key, name in (('scores', '**{}**'), ('initial_weights',
                                             '{} initial weights')):
        for method in data['methods']:
            if method in summary:
                s = summary[method]
                seeds = ','.join(str(x) for x in s['seeds'])
                lines.append('| ' + ' | '.join([name.format(method), seeds] +
                                               stats_cells(s[key], METRICS)) +
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
    """The README's part of ``tools/studies/claim_study.py``: the main table
    and the reading."""
    data = results['data']
    lines = _claim_main_rows(data) + ['']
    lines += [f'* {x}' for x in claim_reading(data, floors=False)]
    return '\n'.join(lines + smoke_note(data))


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
    return '\n'.join([f'* {x}' for x in _past_pixels(data)] + smoke_note(data))


@results_table('claim_holdout')
@results_table('claim_token_map')
@results_table('claim_token_map_holdout')
@results_table('claim_token_map_norm_holdout')
def claim_records_table(results: dict) -> str:
    """A results file of ``tools/studies/claim_study.py`` as its records, one
    row per scored checkpoint, beside raw pixels: the held-out scores
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
    return '\n'.join(lines + smoke_note(data))


@results_table('claim')
def claim_table(results: dict) -> str:
    """``tools/studies/claim_study.py``: per method the mean and spread over
    seeds of every score, the floors, the paper's orderings against ours, and
    the learning curve."""
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
    return '\n'.join(lines + smoke_note(data))
