"""The paper's Table 3 (ablations) in miniature.

Each row is a config under ``configs/pretrain/ablations``, its settings
written out (the one source of the row). :func:`read_row` reads the row's
switches off those settings; :func:`apply_table3_row` applies switches to
a SiameseIM pretraining config: the Fashion-MNIST demo's (the miniature),
or the ImageNet 400-epoch one, which gives the ablation config back (a test
checks it). Plus the report and its figure.
"""
import copy
import glob
import inspect
import os.path as osp
import time
from typing import Dict, Optional, Tuple

from mmengine.config import Config

from mmsiameseim.atomic_io import atomic_write
from projects.common.metrics import VOCABULARY

# switch -> its values; the order of the paper's columns
SWITCHES = {
    'target': ('feature', 'pixel'),
    'views': ('different', 'same'),
    'colour': (True, False),
    'mask': ('blockwise', 'random'),
    'norm': ('BN', 'LN'),
    'loss_norm': ('mae-like', 'moco-like'),
    'loss': ('dense', 'global'),
}
COLUMNS = tuple(SWITCHES)
# the LayerNorm of the LN rows' projector and decoder (the authors' timm
# blocks: LayerNorm with eps 1e-6)
LN_NORM_CFG = dict(type='LN', eps=1e-6)
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


def check_row(row: dict, source: str) -> dict:
    """Refuse switches that lack one, have an unknown one or a value Table 3
    does not have; the message names ``source``."""
    if not isinstance(row, dict):
        raise ValueError(f'{source}: a Table 3 row is a dict of the switches '
                         f'{list(SWITCHES)}, got {type(row).__name__}')
    missing = [k for k in SWITCHES if k not in row]
    unknown = [k for k in row if k not in SWITCHES]
    wrong = [
        f'{k}={row[k]!r} (one of {SWITCHES[k]})' for k in SWITCHES
        if k in row and row[k] not in SWITCHES[k]
    ]
    if missing or unknown or wrong:
        raise ValueError(
            f'{source}: not a Table 3 row: ' +
            '; '.join([f'missing {missing}'] * bool(missing) +
                      [f'unknown switches {unknown}'] * bool(unknown) + wrong))
    return {k: row[k] for k in SWITCHES}


def read_row(path: str) -> dict:
    """The Table 3 switches of the SiameseIM pretraining config at
    ``path``, read off its settings: ``model.target_type``, the crop's
    ``same_view``, whether ``PerViewTransforms`` (the colour augmentation)
    is in the pipeline, the mask generator, the neck's norm (token
    BatchNorm or LayerNorm), ``model.head.loss.target_norm`` and
    ``model.head.loss_type``; an argument a config leaves out is its
    class's default."""
    from mmpretrain.registry import MODELS, TRANSFORMS

    import mmsiameseim  # noqa: F401  (the registered defaults)
    cfg = Config.fromfile(path)
    model = cfg.model.to_dict()
    if model.get('type') != 'SiameseIM':
        raise ValueError(f'{path}: not a SiameseIM pretraining config '
                         f"(model.type={model.get('type')!r})")
    pipeline = cfg.train_dataloader.dataset.pipeline
    types = [t['type'] for t in pipeline]
    crop = pipeline[_find(pipeline, 'TwoViewRandomResizedCrop')]
    norm = model['neck'].get('norm_cfg') or _default_arg(
        MODELS, model['neck'], 'norm_cfg')
    norms = {'LN': 'LN', 'TokenBN': 'BN', 'TokenBatchNorm': 'BN'}
    if norm['type'] not in norms:
        raise ValueError(f'{path}: the neck norm {norm["type"]!r} is not a '
                         f'Table 3 one ({sorted(norms)})')
    row = dict(
        target=_default_arg(MODELS, model, 'target_type'),
        views='same'
        if _default_arg(TRANSFORMS, crop, 'same_view') else 'different',
        colour='PerViewTransforms' in types,
        mask='random' if 'RandomPatchMaskGenerator' in types else 'blockwise',
        norm=norms[norm['type']],
        loss_norm=_default_arg(MODELS, model['head']['loss'], 'target_norm'),
        loss=_default_arg(MODELS, model['head'], 'loss_type'))
    return check_row(row, path)


def _default_arg(registry, cfg: dict, name: str):
    """``cfg[name]``, or the default of the registered class's argument."""
    if name in cfg:
        return cfg[name]
    cls = registry.get(cfg['type'])
    return inspect.signature(cls).parameters[name].default


def _find(pipeline: list, *types: str) -> int:
    found = [i for i, t in enumerate(pipeline) if t['type'] in types]
    if len(found) != 1:
        raise ValueError(f'the training pipeline needs exactly one of '
                         f'{list(types)}, found {len(found)}: '
                         f'{[t["type"] for t in pipeline]}')
    return found[0]


def apply_table3_row(base_cfg: Config, row: dict) -> Config:
    """A copy of ``base_cfg`` (a SiameseIM pretraining config: the ImageNet
    400-epoch one or the Fashion-MNIST demo's) with one Table 3 row's switches.

    Each switch sets the options the ablation configs' README names:
    ``model.target_type`` (pixel: ``neck.out_channels`` = the backbone's
    ``patch_size**2 * in_channels``), the crop's ``same_view``, the
    colour transforms (dropped; shared with one view), the mask generator
    (``RandomPatchMaskGenerator`` of the same grid and count), the neck's
    norm (``LN_NORM_CFG``), ``model.head.loss.target_norm`` and
    ``model.head.loss_type``. Everything else is the base's.

    Args:
        base_cfg (Config): The config the row applies to (not changed).
        row (dict): The switches (:data:`SWITCHES`; checked).

    Returns:
        Config: The row's config.
    """
    from mmpretrain.registry import MODELS
    row = check_row(row, 'apply_table3_row')
    cfg = copy.deepcopy(base_cfg)
    model = cfg.model
    model.target_type = row['target']
    if row['target'] == 'pixel':
        bb = model.backbone
        model.neck.out_channels = _default_arg(MODELS, bb, 'patch_size')**2 \
            * _default_arg(MODELS, bb, 'in_channels')
    if row['norm'] == 'LN':
        model.neck.norm_cfg = copy.deepcopy(LN_NORM_CFG)
    model.head.loss.target_norm = row['loss_norm']
    model.head.loss_type = row['loss']
    pipeline = [
        copy.deepcopy(t) for t in cfg.train_dataloader.dataset.pipeline
    ]
    crop = pipeline[_find(pipeline, 'TwoViewRandomResizedCrop')]
    crop['same_view'] = row['views'] == 'same'
    colour = _find(pipeline, 'PerViewTransforms')
    if not row['colour']:
        del pipeline[colour]
    elif row['views'] == 'same':  # the input's colours, shared
        pipeline[colour] = dict(
            type='PerViewTransforms',
            shared=True,
            pipelines=[pipeline[colour]['pipelines'][0]])
    mask = _find(pipeline, 'BlockwiseMaskGenerator',
                 'RandomPatchMaskGenerator')
    if row['mask'] == 'blockwise' and \
            pipeline[mask]['type'] != 'BlockwiseMaskGenerator':
        raise ValueError(
            'a blockwise-mask row needs a base config with a '
            f"BlockwiseMaskGenerator, not {pipeline[mask]['type']}")
    if row['mask'] == 'random' and \
            pipeline[mask]['type'] == 'BlockwiseMaskGenerator':
        pipeline[mask] = dict(
            type='RandomPatchMaskGenerator',
            input_size=pipeline[mask]['input_size'],
            num_masking_patches=pipeline[mask]['num_masking_patches'])
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
            lin=metrics['Linear probe top-1'],
            ap_box=metrics['box AP'],
            ap_mask=metrics['mask AP'])
    return out


def plot_table3(results: Dict[str, dict],
                paper: Dict[str, dict],
                path: str,
                title: str,
                floor: Optional[Tuple[str, dict]] = None) -> None:
    """Ours (kNN, linear probe) and the paper's LIN per row (PNG); with
    ``floor`` ((row, results) of a run's initial weights), its kNN and
    linear probe as dashed lines across the rows."""
    import matplotlib
    matplotlib.use('Agg')
    import textwrap

    import matplotlib.pyplot as plt
    import numpy as np
    rows = list(results)
    x = np.arange(len(rows))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5))
    series = [(m, VOCABULARY[m].label) for m in ('knn', 'linear')]
    for i, (key, label) in enumerate(series):
        bars = ax.bar(
            x + (i - .5) * .4, [results[r][key] for r in rows],
            .4,
            label=label)
        ax.bar_label(bars, fmt='%.1f', fontsize=7)
        if floor is not None:
            ax.axhline(
                floor[1][key],
                color=bars.patches[0].get_facecolor(),
                linestyle='--',
                linewidth=1,
                label=f'{label}, ({floor[0]}) at its initial weights')
    # the run's settings are a long sentence: wrapped, or it runs into the
    # paper's panel
    ax.set_title(textwrap.fill(title, 80), fontsize=9)
    ax.set_ylabel('top-1 (%)')
    lo = min(min(results[r]['knn'], results[r]['linear']) for r in rows)
    ax.set_ylim(max(0, lo - 10), 100)
    bars = bx.bar(
        x, [paper[r]['lin'] if r in paper else np.nan for r in rows],
        .6,
        color='gray')
    bx.bar_label(bars, fmt='%.1f', fontsize=7)
    bx.set_title('paper (ImageNet-1k, ViT-B/16, 400 epochs): LIN')
    bx.set_ylim(40, 80)
    for a in (ax, bx):
        a.set_xticks(x)
        a.set_xticklabels([f'({r})' for r in rows])
    # above the bars (the y axis reaches 100), where no row's bar is
    ax.legend(loc='upper left', ncol=2, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_table3_report(path: str,
                        factors: Dict[str, dict],
                        results: Dict[str, dict],
                        walls: Dict[str, dict],
                        paper: Dict[str, dict],
                        settings: str,
                        protocol_lines: list,
                        floor: Optional[Tuple[str, dict]] = None,
                        note: str = '') -> str:
    """``table3.md`` (laid out like the paper's Table 3, with the paper's
    numbers beside ours and which of its comparisons hold) and, beside it,
    ``table3.png``.

    Args:
        path (str): The markdown file.
        factors (dict): Row -> its switches (:func:`read_row`).
        results (dict): Row -> ``knn``, ``linear``, ``fewshot``.
        walls (dict): Row -> ``total_s`` (pretraining + evaluation).
        paper (dict): :func:`paper_results`.
        settings (str): What every row ran, read off its config.
        protocol_lines (list): The evaluation protocol, as bullets.
        floor (tuple, optional): (row, results) of a run's initial weights.
        note (str): Appended to the "Produced by" line.
    """
    plot_table3(results, paper, osp.join(osp.dirname(path), 'table3.png'),
                f'miniature (Fashion-MNIST): {settings}', floor)
    yes = lambda v: 'yes' if v else ''  # noqa: E731
    lines = [
        '# Table 3 in miniature (Fashion-MNIST, CPU)', '',
        f'Produced by `python projects/table3/tools/ablation_table3.py` on '
        f'{time.strftime("%Y-%m-%d %H:%M")}{note}. Each row: {settings}, '
        'with that row\'s switches (same seed), evaluated like the demo. '
        'Paper columns: ViT-B/16, 400 epochs on ImageNet-1k. The miniature '
        'does not reproduce ImageNet numbers.', ''
    ] + protocol_lines + [
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
            f'{res["fewshot"]:.2f}.'
        ]
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
    lines += [
        '', '"holds" compares the sign of the linear-probe difference '
        'with the paper\'s.', '', '![table 3](table3.png)', ''
    ]
    atomic_write(path, '\n'.join(lines))
    return path
