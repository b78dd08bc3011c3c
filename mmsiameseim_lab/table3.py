"""The paper's Table 3 (ablations) in miniature: each row's switches read
off its config and applied to a small pretraining config, and the table."""
import copy
import glob
import os.path as osp
import time
from typing import Dict, Optional, Tuple

from mmengine.config import Config

from mmsiameseim.atomic_io import atomic_write

COLUMNS = ('target', 'views', 'colour', 'mask', 'norm', 'loss_norm', 'loss')
# The comparisons the paper draws from Table 3 (its Section 4.3): the pair
# of rows and the one factor they differ in.
COMPARISONS = [
    ('a', 'b', 'one view: pixel vs feature target'),
    ('e', 'd', 'two views: feature vs pixel target'),
    ('f', 'a', 'different views vs same view (best of each)'),
    ('f', 'e', 'two views: colour augmentation on vs off'),
    ('c', 'a', 'one view: colour augmentation on vs off'),
    ('g', 'f', 'BN vs LN in projector and decoder'),
    ('h', 'g', 'blockwise vs random mask'),
    ('i', 'h', 'MAE-like vs MoCo-like loss normalisation'),
    ('g', 'j', 'dense vs global loss'),
]
PREFIX = 'siameseim-table3'


def row_configs(folder: str) -> Dict[str, str]:
    """{row letter: config path} of the Table 3 configs in ``folder``."""
    rows = {}
    for path in sorted(glob.glob(osp.join(folder, PREFIX + '*.py'))):
        rows[osp.basename(path)[len(PREFIX)]] = path
    if not rows:
        raise FileNotFoundError(f'no {PREFIX}*.py configs in {folder}')
    return rows


def table3_factors(cfg: Config) -> dict:
    """The Table 3 columns of a SiameseIM config, read off its switches."""
    model = cfg['model']
    pipeline = {t['type']: t
                for t in cfg['train_dataloader']['dataset']['pipeline']}
    norm = model['neck']['norm_cfg']['type']
    if norm not in ('LN', 'TokenBN'):
        raise ValueError(f'model.neck.norm_cfg.type={norm!r}: Table 3 only '
                         "has 'LN' and 'TokenBN' (BN)")
    if 'TwoViewRandomResizedCrop' not in pipeline:
        raise ValueError('the training pipeline has no '
                         'TwoViewRandomResizedCrop')
    masks = [m for m in ('BlockwiseMaskGenerator', 'RandomPatchMaskGenerator')
             if m in pipeline]
    if len(masks) != 1:
        raise ValueError(f'expected one mask generator, found {masks}')
    return dict(
        target=model.get('target_type', 'feature'),
        views='same' if pipeline['TwoViewRandomResizedCrop'].get(
            'same_view', False) else 'different',
        colour='PerViewTransforms' in pipeline,
        mask='blockwise' if masks[0] == 'BlockwiseMaskGenerator' else
        'random',
        norm='LN' if norm == 'LN' else 'BN',
        loss_norm=model['head']['loss'].get('target_norm', 'mae-like'),
        loss=model['head'].get('loss_type', 'dense'))


def miniature_cfg(factors: dict, base_cfg: Config) -> Config:
    """A copy of ``base_cfg`` (a SiameseIM pretraining config) with the
    switches of one Table 3 row (:func:`table3_factors`)."""
    cfg = copy.deepcopy(base_cfg)
    model = cfg.model
    model.target_type = factors['target']
    if factors['target'] == 'pixel':
        bb = model.backbone
        model.neck.out_channels = bb.patch_size**2 * bb.in_channels
    if factors['norm'] == 'LN':
        model.neck.norm_cfg = dict(type='LN', eps=1e-6)
    model.head.loss.target_norm = factors['loss_norm']
    model.head.loss_type = factors['loss']
    pipeline = []
    for t in cfg.train_dataloader.dataset.pipeline:
        t = copy.deepcopy(t)
        if t['type'] == 'TwoViewRandomResizedCrop':
            t['same_view'] = factors['views'] == 'same'
        elif t['type'] == 'PerViewTransforms':
            if not factors['colour']:
                continue
            if factors['views'] == 'same':  # the input's colours, shared
                t = dict(type='PerViewTransforms', shared=True,
                         pipelines=[t['pipelines'][0]])
        elif t['type'] == 'BlockwiseMaskGenerator' and \
                factors['mask'] == 'random':
            t = dict(type='RandomPatchMaskGenerator',
                     input_size=t['input_size'],
                     num_masking_patches=t['num_masking_patches'])
        pipeline.append(t)
    cfg.train_dataloader.dataset.pipeline = pipeline
    return cfg


def paper_results(metafile: str) -> Dict[str, dict]:
    """{row: dict(lin, ap_box, ap_mask)} from the ablation metafile."""
    import yaml
    with open(metafile) as f:
        meta = yaml.safe_load(f)
    out = {}
    for model in meta['Models']:
        metrics = {}
        for res in model['Results']:
            metrics.update(res['Metrics'])
        out[model['Name'][len(PREFIX)]] = dict(
            lin=metrics['Linear probe top-1'], ap_box=metrics['box AP'],
            ap_mask=metrics['mask AP'])
    return out


def plot_table3(results: Dict[str, dict], paper: Dict[str, dict],
                path: str, title: str) -> None:
    """Ours (kNN, linear probe) and the paper's LIN per row (PNG)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    rows = list(results)
    x = np.arange(len(rows))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5))
    for i, (key, label) in enumerate((('knn', 'kNN'),
                                      ('linear', 'linear probe'))):
        bars = ax.bar(x + (i - .5) * .4, [results[r][key] for r in rows], .4,
                      label=label)
        ax.bar_label(bars, fmt='%.1f', fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel('top-1 (%)')
    lo = min(min(results[r]['knn'], results[r]['linear']) for r in rows)
    ax.set_ylim(max(0, lo - 10), 100)
    bars = bx.bar(x, [paper[r]['lin'] if r in paper else np.nan
                      for r in rows], .6, color='gray')
    bx.bar_label(bars, fmt='%.1f', fontsize=7)
    bx.set_title('paper (ImageNet-1k, ViT-B/16, 400 epochs): LIN')
    bx.set_ylim(40, 80)
    for a in (ax, bx):
        a.set_xticks(x)
        a.set_xticklabels([f'({r})' for r in rows])
    ax.legend(loc='lower right', fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_table3_report(path: str, factors: Dict[str, dict],
                        results: Dict[str, dict], walls: Dict[str, dict],
                        paper: Dict[str, dict], settings: str,
                        protocol_lines: list,
                        floor: Optional[Tuple[str, dict]] = None,
                        note: str = '') -> str:
    """``table3.md`` (laid out like the paper's Table 3, with the paper's
    numbers beside ours and which of its comparisons hold) and, beside it,
    ``table3.png``.

    Args:
        path (str): The markdown file.
        factors (dict): Row -> :func:`table3_factors`.
        results (dict): Row -> ``knn``, ``linear``, ``fewshot``.
        walls (dict): Row -> ``total_s`` (pretraining + evaluation).
        paper (dict): :func:`paper_results`.
        settings (str): What every row ran, read off its config.
        protocol_lines (list): The evaluation protocol, as bullets.
        floor (tuple, optional): (row, results) of a run's initial weights.
        note (str): Appended to the "Produced by" line.
    """
    plot_table3(results, paper, osp.join(osp.dirname(path), 'table3.png'),
                f'miniature (Fashion-MNIST): {settings}')
    yes = lambda v: 'yes' if v else ''  # noqa: E731
    lines = [
        '# Table 3 in miniature (Fashion-MNIST, CPU)', '',
        f'Produced by `python tools/ablation_table3.py` on '
        f'{time.strftime("%Y-%m-%d %H:%M")}{note}. Each row: {settings}, '
        'with that row\'s switches (same seed), evaluated like the demo. '
        'Paper columns: ViT-B/16, 400 epochs on ImageNet-1k. The miniature '
        'does not reproduce ImageNet numbers.', ''] + protocol_lines + [
        '', '| row | target | different views | colour aug | mask | BN/LN | '
        'loss norm | loss | kNN | LIN | few-shot | wall time | paper LIN | '
        'paper AP^b | paper AP^m |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
    ]
    for row, res in results.items():
        f, p = factors[row], paper.get(row, {})
        lines.append(
            f'| ({row}) | {f["target"]} | {yes(f["views"] == "different")} | '
            f'{yes(f["colour"])} | {f["mask"]} | {f["norm"]} | '
            f'{f["loss_norm"]} | {f["loss"]} | {res["knn"]:.2f} | '
            f'{res["linear"]:.2f} | {res["fewshot"]:.2f} | '
            f'{walls[row]["total_s"] / 60:.1f} min | {p.get("lin", "-")} | '
            f'{p.get("ap_box", "-")} | {p.get("ap_mask", "-")} |')
    if floor:
        row, res = floor
        lines += [
            '', f'Floor: row ({row})\'s run at its own initial weights (saved '
            'before its first step, evaluated the same way): kNN '
            f'{res["knn"]:.2f}, LIN {res["linear"]:.2f}, few-shot '
            f'{res["fewshot"]:.2f}.']
    total = sum(w['total_s'] for w in walls.values())
    lines += [
        '', f'Total wall time of the rows: {total / 60:.1f} min '
        '(pretraining + evaluation).', '',
        '## The paper\'s comparisons at this scale', '',
        '| rows | factor | paper LIN | ours LIN | ours kNN | holds? |',
        '|---|---|---|---|---|---|'
    ]
    for x, y, what in COMPARISONS:
        if x not in results or y not in results:
            continue
        dp = paper[x]['lin'] - paper[y]['lin']
        dl = results[x]['linear'] - results[y]['linear']
        dk = results[x]['knn'] - results[y]['knn']
        holds = 'yes' if (dl > 0) == (dp > 0) else 'no'
        lines.append(f'| ({x}) - ({y}) | {what} | {dp:+.1f} | {dl:+.2f} | '
                     f'{dk:+.2f} | {holds} |')
    lines += ['', '"holds" compares the sign of the linear-probe difference '
              'with the paper\'s.', '', '![table 3](table3.png)', '']
    atomic_write(path, '\n'.join(lines))
    return path
