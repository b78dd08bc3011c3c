import statistics
from typing import Dict, List, Sequence

from projects.common.metrics import PROTOCOL_METRICS, headings

# the columns of a seed table
METRICS = PROTOCOL_METRICS + ('images_per_s', )


def mean_spread(values: Sequence[float]) -> str:
    """'mean ± sample sd (min-max)' of ``values``; the value alone for
    one, '-' for none."""
    if not values:
        return '-'
    mean = statistics.mean(values)
    if len(values) == 1:
        return f'{mean:.2f}'
    return (f'{mean:.2f} ± {statistics.stdev(values):.2f} '
            f'({min(values):.2f}-{max(values):.2f})')


def format_seed_table(runs: List[dict],
                      names: Dict[str, str],
                      notes: Sequence[str] = ()) -> str:
    """Markdown: per implementation, the mean and spread over its seeds of
    kNN, linear probe, few-shot top-1 and images/s; then ``notes`` and
    every run.

    Args:
        runs (list[dict]): ``impl``, ``seed``, ``knn``, ``linear``,
            ``fewshot``, ``images_per_s`` and ``wall_s`` of each run.
        names (dict): Implementation key -> its name in the table, in
            table order.
        notes (sequence of str): Lines between the two tables.
    """
    head = ('implementation', 'seeds', *headings(METRICS))
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for impl, name in names.items():
        rows = [r for r in runs if r['impl'] == impl]
        if rows:
            seeds = ','.join(str(r['seed']) for r in rows)
            cells = [mean_spread([r[k] for r in rows]) for k in METRICS]
            lines.append(' | '.join([f'| {name}', seeds, *cells]) + ' |')
    lines += [
        '', 'mean ± sample standard deviation (min-max) over the seeds.',
        *notes, '', 'Per run:', '',
        '| implementation | seed | kNN | linear | few-shot | images/s | '
        'pretraining wall s |', '|---|---|---|---|---|---|---|'
    ]
    for r in runs:
        lines.append(f'| {r["impl"]} | {r["seed"]} | {r["knn"]:.2f} | '
                     f'{r["linear"]:.2f} | {r["fewshot"]:.2f} | '
                     f'{r["images_per_s"]:.0f} | {r["wall_s"]:.0f} |')
    return '\n'.join(lines) + '\n'
