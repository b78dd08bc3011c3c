import glob
import json
import os
from typing import Dict, List

from projects.common.metrics import PROTOCOL_METRICS, VOCABULARY


def read_scalar_records(work_dir: str, key: str, order_key: str) -> List[dict]:
    """Records of mmengine's ``vis_data/scalars.json`` in every run of a
    work dir (resumes included) that hold ``key``, one per ``order_key``
    value (a later run's record wins), in that order."""
    records = {}
    pattern = os.path.join(work_dir, '*', 'vis_data', 'scalars.json')
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                if key in rec and order_key in rec:
                    records[rec[order_key]] = rec
    return [records[k] for k in sorted(records)]


def read_scalars(work_dir: str) -> List[dict]:
    """Training scalars (mmengine ``vis_data/scalars.json``) of a work dir,
    all runs (resumes included) in iteration order."""
    return read_scalar_records(work_dir, 'loss', 'iter')


def plot_training_curves(runs: Dict[str, List[dict]], path: str) -> None:
    """Loss, learning rate and target momentum against iterations (PNG).

    With several runs (different losses on different scales) each loss is drawn
    relative to its first logged value.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    keys = [('loss', 'training loss'), ('lr', 'learning rate'),
            ('momentum', 'target momentum (mmpretrain convention)')]
    relative = len(runs) > 1
    if relative:
        keys[0] = ('loss', 'training loss / its first logged value')
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (key, title) in zip(axes, keys):
        for name, recs in runs.items():
            pts = [(r['iter'], r[key]) for r in recs if key in r]
            if pts and key == 'loss' and relative:
                pts = [(i, v / pts[0][1]) for i, v in pts]
            if pts:
                ax.plot(*zip(*pts), label=name)
        ax.set_title(title)
        ax.set_xlabel('iteration')
        if ax.has_data():
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_accuracy_chart(results: Dict[str, Dict[str, float]],
                        pixels: Dict[str, float], path: str) -> None:
    """Grouped bars: method x (kNN, linear probe, 1 % few-shot), and raw
    pixels through the same three (grey, hatched; ``pixels`` has
    ``knn``, ``linear``, ``fewshot`` and ``dim``) (PNG)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    metrics = [(m, VOCABULARY[m].label) for m in PROTOCOL_METRICS]
    names = list(results) + [None]  # None: the pixels
    x = np.arange(len(metrics))
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, name in enumerate(names):
        row = pixels if name is None else results[name]
        vals = [row.get(m, float('nan')) for m, _ in metrics]
        style = dict(
            label=f'raw pixels ({pixels["dim"]} values)',
            color='lightgray',
            hatch='//',
            edgecolor='gray') if name is None else dict(label=name)
        bars = ax.bar(x + i * width, vals, width, **style)
        ax.bar_label(bars, fmt='%.1f', fontsize=8)
    ax.set_xticks(x + width * (len(names) - 1) / 2)
    ax.set_xticklabels([m[1] for m in metrics])
    ax.set_ylabel('top-1 accuracy (%) on the 10k test images')
    ax.set_ylim(0, 100)
    ax.legend(loc='lower right', fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
