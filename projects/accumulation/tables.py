"""Gradient accumulation's published tables (results/ of this project): the
gradients' distances (accumulation.json) and the study of training with
exact and plain accumulation (accumulation_study.json)."""
import json
import statistics as st
from typing import List

from projects.accumulation.gradients import table as accumulation_rows
from projects.claim.data import FORMAT
from projects.claim.statistics import format_p, judge, welch_p
from projects.claim.tables import number_cells, pixel_floor
from projects.claim.verdicts import values
from projects.common.metrics import (METRIC_NAMES, METRICS, headings,
                                     stats_cells)
from projects.common.results import (hosts_line, results_cell, results_table,
                                     smoke_note)


@results_table('accumulation')
def accumulation_table(results: dict) -> str:
    """Exact and plain gradient accumulation against the whole batch's
    gradient (``projects/accumulation/tools/accumulation.py``)."""
    return accumulation_rows(results['data']['rows'])


# the settings of projects/accumulation/configs/accumulation_study.py, in its
# method order
_ACCUMULATION_SETTINGS = {
    'siameseim': 'batch 64 (the demo)',
    'siameseim-microbatch4': '4 x 16, exact (`model.micro_batches=4`)',
    'siameseim-accum4': '4 x 16, plain (`accumulative_counts=4`)',
    'siameseim-bs16-lr-scaled': 'batch 16, lr / 4',
}

# the scores the study compares (the dense per-patch accuracy left out)
SCORED = METRICS[:4]


def _setting(method: str) -> str:
    return _ACCUMULATION_SETTINGS.get(method, method)


def setting_comparisons(data: dict) -> List[dict]:
    """Each setting against batch 64 (the study's first method), score by
    score: the difference of the means and the two-sided Welch p, Holm's
    correction over all of them (one family). No direction is expected, so
    a verdict is ``differs`` (adjusted p below alpha) or ``undecided``."""
    records, methods = data['records'], data['methods']
    out = []
    for method in methods[1:]:
        for metric in SCORED:
            a = list(values(records, method, metric).values())
            b = list(values(records, methods[0], metric).values())
            if not a or not b:
                continue
            out.append(
                dict(
                    method=method,
                    metric=metric,
                    diff=st.mean(a) - st.mean(b),
                    p=welch_p(a, b),
                    expected_sign=1))
    for c in judge(out, data['statistics']['alpha']):
        c['verdict'] = 'undecided' if c['verdict'] == 'undecided' \
            else 'differs'
    return out


def _comparison_text(c: dict) -> str:
    # rounded first: a difference of -0.001 reads +0.00, not -0.00
    return (f'{METRIC_NAMES[c["metric"]]} {round(c["diff"], 2) + 0.0:+.2f} '
            f'(p {format_p(c["p"])}, Holm {format_p(c["p_holm"])})')


def _accumulation_reading(data: dict) -> list:
    """Each setting against batch 64, then each setting over its own
    initial weights (the results file's tested gains)."""
    comparisons = setting_comparisons(data)
    out = []
    for method in data['methods'][1:]:
        mine = [c for c in comparisons if c['method'] == method]
        if not mine:
            continue
        found = [c for c in mine if c['verdict'] == 'differs']
        line = f'{_setting(method)} against batch 64: ' + (
            'differs on ' + ', '.join(map(_comparison_text, found))
            if found else 'no difference the corrected test finds')
        rest = [c for c in mine if c['verdict'] != 'differs']
        if rest:
            line += ('; undecided: ' if found else ': ') + ', '.join(
                map(_comparison_text, rest))
        out.append(line + '.')
    gains = [
        c for c in data['statistics']['table']
        if c['kind'] == 'gain' and c['metric'] in SCORED
    ]
    for method in data['methods']:
        mine = [c for c in gains if c['method'] == method]
        if mine:
            out.append(f'{_setting(method)} over its initial weights: ' +
                       ', '.join(f'{_comparison_text(c)} {c["verdict"]}'
                                 for c in mine) + '.')
    return out


def _initial_weights_rows(data: dict) -> list:
    """The floor: one row when every setting starts from the same weights
    (the same seeds, the same network), else one row per setting."""
    summary = data['summary']
    floors = {
        m: summary[m]['initial_weights']
        for m in data['methods'] if summary.get(m, {}).get('initial_weights')
    }
    seeds = {m: summary[m]['seeds'] for m in floors}
    if len({json.dumps([floors[m], seeds[m]], sort_keys=True)
            for m in floors}) == 1:
        m = next(iter(floors))
        return [
            _row('initial weights (every setting\'s, before its first step)',
                 seeds[m], stats_cells(floors[m], SCORED), '-')
        ]
    return [
        _row(f'{_setting(m)}: initial weights', seeds[m],
             stats_cells(floors[m], SCORED), '-') for m in floors
    ]


def _row(name: str, seeds: list, cells: list, wall: str) -> str:
    return '| ' + ' | '.join(
        [name, ','.join(map(str, seeds)) or '-', *cells, wall]) + ' |'


@results_table('accumulation_study')
def accumulation_study_table(results: dict) -> str:
    """The demo's batch of 64 against three ways of training it on a quarter of
    the images at a time
    (``projects/accumulation/configs/accumulation_study.py`` run by
    ``projects/claim/tools/claim_study.py``): mean and spread over the seeds,
    the
    pretraining time, the floors (the same network's initial weights, raw
    pixels through the same protocol), each setting against batch 64 and
    each over its initial weights, with Holm-corrected tests."""
    data = results['data']
    if data.get('format') != FORMAT:
        raise ValueError(
            'accumulation_study.json is of the claim study\'s '
            f'format {data.get("format", 1)}; only format {FORMAT} is '
            'rendered: rerun the command above it to replace it')
    summary = data['summary']
    head = ('setting', 'seeds', *headings(SCORED), 'pretraining (s)')
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for method in data['methods']:
        if method not in summary:
            continue
        s = summary[method]
        walls = [
            r['pretrain_wall_s'] for r in data['records']
            if r.get('kind') == 'table' and r['method'] == method
        ]
        lines.append(
            _row(
                _setting(method), s['seeds'], stats_cells(s['scores'], SCORED),
                f'{sum(walls) / len(walls):.0f}'))
    lines += _initial_weights_rows(data)
    floors = data['pixel_floors']
    lines.append(
        _row(
            f'raw pixels ({floors["raw"]["dim"]} values)', [],
            number_cells([
                pixel_floor(floors, 'raw', m, optional=True) for m in SCORED
            ]), '-'))
    bf16 = {True: 'with', False: 'without'}.get(data.get('native_bf16'))
    lines += [
        '', 'mean ± sample standard deviation (min-max) over the seeds; '
        'initial weights: each run before its first step; raw pixels: read '
        'by the same kNN, linear probe, few-shot and dense probe as the '
        'features; pretraining: the mean wall time of one epoch on the '
        '2-core CPU' + (f' ({bf16} native bf16)' if bf16 else '') + '. '
        'Tests: each setting against batch 64 by Welch\'s t over the '
        'seeds, Holm\'s correction over those comparisons ("differs": the '
        f'adjusted p below {data["statistics"]["alpha"]}); each setting '
        'over its initial weights by a paired t, Holm-corrected with the '
        'study\'s other tests of the results file.', ''
    ]
    lines += [f'* {x}' for x in _accumulation_reading(data)]
    lines += ['', hosts_line(data['records'])]
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
