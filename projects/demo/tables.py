"""The demo's published table (projects/demo/results/demo.json): ``make
demo``'s rows, and the model-zoo cell of a demo row."""
from projects.common.metrics import PROTOCOL_METRICS, headings
from projects.common.results import results_cell, results_table, smoke_note


@results_table('demo')
def demo_table(results: dict) -> str:
    """``make demo``: kNN, linear probe and 1 % few-shot top-1 per row,
    pretraining wall time and images/s, raw pixels, the total time."""
    data = results['data']
    if 'pixels' not in data:
        raise ValueError(
            'demo results without the raw pixels\' linear probe and '
            'few-shot (their kNN alone, mean-centred: `pixel_knn`, from '
            'before the pixels went through the features\' protocol): '
            'rerun projects/demo/tools/demo.py --publish')
    head = ('method', *headings(PROTOCOL_METRICS), 'pretraining wall time',
            'images/s')
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in data['rows']:
        wall = '-' if r.get('pretrain_wall_s') is None else \
            f'{r["pretrain_wall_s"] / 60:.1f} min' + \
            ' (resumed)' * bool(r.get('resumed'))
        ips = '-' if not r.get('images_per_s') else \
            f'{r["images_per_s"]:.0f}'
        lines.append(f'| {r["method"]} | {r["knn"]:.2f} | {r["linear"]:.2f} '
                     f'| {r["fewshot"]:.2f} | {wall} | {ips} |')
    px = data['pixels']
    lines.append(f'| {pixel_row_name(px)} | {px["knn"]:.2f} | '
                 f'{px["linear"]:.2f} | {px["fewshot"]:.2f} | - | - |')
    lines += ['', _wall_line(data)] + smoke_note(data)
    return '\n'.join(lines)


def pixel_row_name(pixel: dict) -> str:
    """The raw-pixel row's name in the demo's tables."""
    return f'raw pixels ({pixel["dim"]} values)'


def _wall_line(data: dict) -> str:
    """The whole demo's wall time, split into its pretrainings (each
    run's training loop) and the rest: the frozen-backbone evaluation of
    every row and the report, and the start-up around them (imports,
    building the runners, the data checks)."""
    whole = data['wall_s']
    pretraining = sum(r.get('pretrain_wall_s') or 0 for r in data['rows'])
    if not pretraining:
        return f'Whole demo: {whole / 60:.1f} min.'
    return (f'Whole demo: {whole / 60:.1f} min: pretraining '
            f'{pretraining / 60:.1f} min, evaluation, report and start-up '
            f'{(whole - pretraining) / 60:.1f} min '
            f'({whole - pretraining:.0f} s).')


@results_cell('demo')
def demo_cell(results: dict, key: str) -> str:
    """KNN / linear / few-shot of the demo row ``key``."""
    rows = {r['method']: r for r in results['data']['rows']}
    if key not in rows:
        raise KeyError(f'demo results: no row {key!r} (rows: {sorted(rows)})')
    r = rows[key]
    return (f'Fashion-MNIST (demo): kNN {r["knn"]:.2f}, linear '
            f'{r["linear"]:.2f}, 1 % few-shot {r["fewshot"]:.2f}')
