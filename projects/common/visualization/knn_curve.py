from typing import Dict, List

from projects.common.visualization.curves import read_scalar_records


def read_knn_scalars(work_dir: str, prefix: str = 'knn') -> List[dict]:
    """The rounds :class:`OnlineKNNHook` logged in a work dir (mmengine
    ``vis_data/scalars.json`` of every run, resumes included), one record
    per step, in step order."""
    return read_scalar_records(work_dir, f'{prefix}/top1', 'step')


def plot_knn_curve(runs: Dict[str, List[dict]],
                   path: str,
                   prefix: str = 'knn') -> None:
    """Online kNN top-1 and top-5 against training iterations (PNG).

    Args:
        runs (dict): Run name -> :func:`read_knn_scalars` records.
        path (str): Output PNG.
        prefix (str): The hook's scalar prefix. Defaults to 'knn'.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, recs in runs.items():
        steps = [r['step'] for r in recs]
        for key, style in (('top1', '-o'), ('top5', '--')):
            vals = [r[f'{prefix}/{key}'] for r in recs]
            if vals:
                ax.plot(steps, vals, style, ms=3, label=f'{name} {key}')
    capped = [
        r['step'] for recs in runs.values() for r in recs
        if r.get(f'{prefix}/capped')
    ]
    banks = sorted({
        int(r[f'{prefix}/bank'])
        for recs in runs.values()
        for r in recs if f'{prefix}/bank' in r
    })
    queries = sorted({
        int(r[f'{prefix}/queries'])
        for recs in runs.values()
        for r in recs if f'{prefix}/queries' in r
    })

    def sizes(values):
        return '/'.join(str(v) for v in values) or '?'

    title = (f'online kNN during pretraining ({sizes(banks)} bank, '
             f'{sizes(queries)} query images)')
    if capped:
        title += f', capped at steps {capped}'
    ax.set_title(title, fontsize=9)
    ax.set_xlabel('iteration')
    ax.set_ylabel('accuracy (%)')
    if ax.has_data():
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
