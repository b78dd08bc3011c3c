"""Table 3 in miniature, published (projects/table3/results/table3.json):

each row's switches and scores beside the paper's, and the model-zoo cell of a
row.
"""
from projects.common.results import results_cell, results_table, smoke_note
from projects.table3.study import COMPARISONS


@results_table('table3')
def table3_table(results: dict) -> str:
    """``projects/table3/tools/ablation_table3.py``: each row's switches, our
    miniature's scores and the paper's."""
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
    return '\n'.join(lines + smoke_note(data))


@results_cell('table3')
def table3_cell(results: dict, key: str) -> str:
    """Our miniature's kNN / linear probe of Table 3 row ``key``."""
    res = results['data']['results']
    if key not in res:
        raise KeyError(f'table3 results: no row {key!r} (rows: {sorted(res)})')
    return (f'miniature (Fashion-MNIST): kNN {res[key]["knn"]:.2f}, LIN '
            f'{res[key]["linear"]:.2f}')
