"""The claim study's charts, drawn from its results data (claim.json)."""
import os
import os.path as osp
from typing import List

from projects.common.metrics import METRICS, VOCABULARY

# (key, chart label) of each score the claim study charts
SERIES = [(m, VOCABULARY[m].label) for m in METRICS]


def _plt():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def plot_claim_table(data: dict, path: str) -> None:
    """Grouped bars: method x metric, the mean over seeds with every seed as
    a dot, each method's initial weights as a grey tick, raw pixels as a
    dashed line where they have the metric (PNG)."""
    import numpy as np
    plt = _plt()
    methods = [m for m in data['methods'] if m in data['summary']]
    x = np.arange(len(SERIES))
    width = 0.8 / max(1, len(methods))
    fig, ax = plt.subplots(figsize=(10, 4.8))
    for i, method in enumerate(methods):
        s = data['summary'][method]
        means = [
            s['scores'].get(m, {}).get('mean', float('nan')) for m, _ in SERIES
        ]
        pos = x + (i - (len(methods) - 1) / 2) * width
        bars = ax.bar(pos, means, width * 0.95, label=method)
        ax.bar_label(bars, fmt='%.1f', fontsize=7)
        for j, (m, _) in enumerate(SERIES):
            seeds = [
                r[m] for r in data['records']
                if r['method'] == method and r['table'] and r.get(m)
            ]
            ax.plot([pos[j]] * len(seeds), seeds, 'k.', ms=3)
            floor = s['initial_weights'].get(m, {}).get('mean')
            if floor is not None:
                ax.plot([pos[j] - width * 0.45, pos[j] + width * 0.45],
                        [floor, floor],
                        color='0.35',
                        lw=2,
                        label='its initial weights' if i == j == 0 else None)
    raw = data['raw_pixels']
    for j, (m, _) in enumerate(SERIES):
        if raw.get(m) is not None:
            ax.plot([x[j] - 0.45, x[j] + 0.45], [raw[m], raw[m]],
                    'r--',
                    lw=1.2,
                    label='raw pixels' if m == 'knn' else None)
    ax.set_xticks(x)
    ax.set_xticklabels([name for _, name in SERIES])
    where = 'held-out training images' if data.get('holdout') else \
        'test images'
    ax.set_ylabel(f'% on the {where}')
    ax.set_ylim(0, 100)
    seeds = sorted({r['seed'] for r in data['records'] if r['table']})
    ax.set_title(
        f'{data["epochs"]} epoch(s), seeds {seeds}: bars = mean, '
        'dots = seeds' if seeds else 'in progress: no table run recorded '
        'yet (the pixel floors only)',
        fontsize=10)
    ax.legend(loc='lower left', fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def curve_points(data: dict, method: str, key: str) -> List[tuple]:
    """(epoch, mean, seeds scored) of ``key`` over ``method``'s curve runs,
    epoch 0 (the initial weights) included, in epoch order."""
    by = {}
    for r in data['records']:
        if r['method'] == method and r['curve'] and r.get(key) is not None:
            by.setdefault(r['epochs'], []).append(r[key])
    return [(e, sum(v) / len(v), len(v)) for e, v in sorted(by.items())]


# where a log-scaled epoch axis draws epoch 0, the initial weights
INIT_X = 0.5


def plot_learning_curve(data: dict, path: str) -> None:
    """kNN and dense mIoU against pretraining epochs (the epoch checkpoints
    of each method's curve runs, the mean over the seeds scored at each;
    the token map's kNN dashed where recorded), each run's initial weights
    at "0 (init)", the pixel floors as lines (PNG)."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    raw = data['raw_pixels']
    projection = (data.get('pixel_floors') or {}).get('projection') or {}
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    curve_seeds = {
        m:
        sorted({
            r['seed']
            for r in data['records'] if r['method'] == m and r['curve']
        })
        for m in data['methods']
    }
    epochs = set()
    for ax, (metric, name) in zip(axes, [SERIES[0], SERIES[3]]):
        for i, method in enumerate(data['methods']):
            seeds = curve_seeds[method]
            for key, style, label in ((metric, 'o-', method),
                                      ('token_map_knn', 's--',
                                       f'{method} token map')):
                if key == 'token_map_knn' and metric != 'knn':
                    continue
                pts = curve_points(data, method, key)
                if not pts:
                    continue
                epochs.update(e for e, _, _ in pts)
                ax.plot([e or INIT_X for e, _, _ in pts],
                        [m for _, m, _ in pts],
                        style,
                        color=colours[i % len(colours)],
                        label=f'{label} (seeds {seeds})')
        if raw.get(metric) is not None:
            ax.axhline(
                raw[metric],
                color='r',
                ls='--',
                label=f'raw pixels ({raw[metric]:.1f})')
        if metric == 'knn' and projection.get('knn') is not None:
            ax.axhline(
                projection['knn'],
                color='0.4',
                ls=':',
                label=f'random projection of the pixels, the token map\'s '
                f'floor ({projection["knn"]:.1f})')
        ax.set_xscale('log', base=2)
        ticks = sorted(epochs) or [1]
        ax.set_xticks([e or INIT_X for e in ticks])
        ax.set_xticklabels(['0 (init)' if e == 0 else str(e) for e in ticks])
        ax.minorticks_off()
        ax.set_xlabel('pretraining epochs (a checkpoint of each curve run)')
        ax.set_ylabel(f'{name} (%)')
        ax.set_title(f'{name}: mean over the seeds scored at each epoch')
        if ax.has_data():
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_claim(data: dict, folder: str) -> List[str]:
    """The charts into ``folder``: claim_table.png, and learning_curve.png
    when the study has a curve (an empty chart otherwise)."""
    os.makedirs(folder, exist_ok=True)
    paths = [osp.join(folder, 'claim_table.png')]
    plot_claim_table(data, paths[0])
    if data.get('curve'):
        paths.append(osp.join(folder, 'learning_curve.png'))
        plot_learning_curve(data, paths[1])
    return paths
