"""The side-by-side study's published tables
(projects/side_by_side/results/side_by_side.json)."""
from projects.common.results import results_table
from projects.demo.seed_table import format_seed_table


@results_table('side_by_side:summary')
def side_by_side_summary(results: dict) -> str:
    """The README's part of ``projects/side_by_side/tools/side_by_side.py``:

    the mean and spread of each side, without the per-run rows.
    """
    full = side_by_side_table(results)
    return full.split('\n\nPer run:')[0]


@results_table('side_by_side')
def side_by_side_table(results: dict) -> str:
    """``projects/side_by_side/tools/side_by_side.py``: ours and the authors'
    code, mean and
    spread over seeds, then every run."""
    data = results['data']
    names = dict(ours='ours (mmsiameseim)', authors='the authors\' code')
    args = data.get('args', {})
    notes = [
        f'Budget per run: {args.get("train_images", "?")} training '
        f'images x {args.get("epochs", "?")} epoch(s) at batch '
        f'{data.get("settings", {}).get("batch", "?")}.'
    ]
    return format_seed_table(data['runs'], names, notes).rstrip('\n')
