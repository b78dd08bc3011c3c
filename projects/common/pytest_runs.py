"""The test run's published tables (conftest.py writes their files):

the counts and wall time, and the fault and person matrices that the tests'
markers make.
"""
from projects.common.results import results_table


@results_table('tests')
def tests_table(results: dict) -> str:
    """The test run's counts, wall time and five slowest tests
    (``conftest.py``)."""
    d = results['data']
    slowest = '<br>'.join(f'`{t["test"].split("/")[-1]}` {t["seconds"]:.0f}'
                          for t in (d.get('slowest') or [])[:5]) or '-'
    return '\n'.join([
        '| selection | passed | failed | errors | skipped | deselected | '
        'wall time | slowest tests (s) |', '|---|---|---|---|---|---|---|---|',
        f'| `pytest {" ".join(d["args"])}` (`-m "{d["markexpr"]}"`) | '
        f'{d["passed"]} | {d["failed"]} | {d["errors"]} | {d["skipped"]} | '
        f'{d["deselected"]} | {d["duration_s"] / 60:.1f} min | {slowest} |'
    ])


results_table('tests_studies')(tests_table)


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
