"""Gradient accumulation's published tables: the gradients' distances
(docs/results/accumulation.json) and the study of training with exact and
plain accumulation (docs/results/accumulation_study.json)."""
from ..claim.study import welch_threshold
from ..metrics import METRIC_NAMES, METRICS, headings, stats_cells
from ..results import results_cell, results_table, smoke_note
from .gradients import table as accumulation_rows


@results_table('accumulation')
def accumulation_table(results: dict) -> str:
    """Exact and plain gradient accumulation against the whole batch's
    gradient (``tools/studies/accumulation.py``)."""
    return accumulation_rows(results['data']['rows'])


# the settings of configs/demo/accumulation_study.py, in its method order
_ACCUMULATION_SETTINGS = {
    'siameseim': 'batch 64 (the demo)',
    'siameseim-microbatch4': '4 x 16, exact (`model.micro_batches=4`)',
    'siameseim-accum4': '4 x 16, plain (`accumulative_counts=4`)',
    'siameseim-bs16-lr-scaled': 'batch 16, lr / 4',
}

# the scores the study compares (the dense per-patch accuracy left out)
SCORED = METRICS[:4]


def _accumulation_reading(data: dict) -> list:
    """Each setting against batch 64, metric by metric: the difference of
    the means and whether a two-sided Welch t-test at 95 % finds it."""
    summary = data['summary']
    base = summary.get('siameseim', {}).get('scores')
    out = []
    for method in data['methods'][1:]:
        scores = summary.get(method, {}).get('scores')
        if not base or not scores:
            continue
        found, within = [], []
        for m in SCORED:
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
    """The demo's batch of 64 against three ways of training it on a quarter of
    the images at a time (``configs/demo/accumulation_study.py`` run by
    ``tools/studies/claim_study.py``): mean and spread over the seeds, the
    pretraining time, and each setting against batch 64."""
    data = results['data']
    summary = data['summary']
    head = ('setting', 'seeds', *headings(SCORED), 'pretraining (s)')
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
        ] + stats_cells(s['scores'], SCORED) +
                                       [f'{sum(walls) / len(walls):.0f}']) +
                     ' |')
    lines += [
        '', 'mean ± sample standard deviation (min-max) over the seeds; '
        'pretraining: the mean wall time of one epoch on the 2-core CPU.', ''
    ]
    lines += [f'* {x}' for x in _accumulation_reading(data)]
    return '\n'.join(lines + smoke_note(data))


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
