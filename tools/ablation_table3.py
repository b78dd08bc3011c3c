"""Table 3 of the paper in miniature: every ablation row on Fashion-MNIST.

    python tools/ablation_table3.py [--work-dir work_dirs/ablation_table3]
                                    [--rows a,b,...] [--seed S] [--smoke]

Each row's config in configs/pretrain/ablations (ViT-B/16, ImageNet, 400
epochs) is read, its switches (target type, views, colour augmentation, mask
type, BN/LN, loss normalisation, dense/global loss) are applied to the CPU
demo config, and the row is pretrained for the same budget as every other
row, then evaluated exactly like the demo (frozen-backbone kNN, linear probe,
1 % few-shot). Writes table3.md (laid out like the paper's Table 3, with the
paper's numbers beside ours and which of the paper's comparisons hold) and
table3.png. Finished rows are reused when the command is run again.
"""
import argparse
import copy
import glob
import os
import os.path as osp
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, osp.join(ROOT, 'tools'))
from demo import (PRETRAIN_CFGS, Demo, atomic_json, check_dataset,  # noqa
                  load_json, say)

ABLATIONS = osp.join(ROOT, 'configs', 'pretrain', 'ablations')
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


def row_configs():
    """{row letter: config path} of every Table 3 row."""
    rows = {}
    for path in sorted(glob.glob(osp.join(ABLATIONS, 'siameseim-table3*.py'))):
        rows[osp.basename(path)[len('siameseim-table3')]] = path
    if not rows:
        sys.exit(f'no Table 3 configs found in {ABLATIONS}')
    return rows


def table3_factors(cfg):
    """The Table 3 columns of a SiameseIM config, read off its switches."""
    model = cfg['model']
    pipeline = {t['type']: t for t in cfg['train_dataloader']['dataset']
                ['pipeline']}
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


def miniature_cfg(factors, demo_cfg):
    """The CPU demo config with the switches of one Table 3 row."""
    cfg = copy.deepcopy(demo_cfg)
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


def paper_results():
    """{row: dict(lin, ap_box, ap_mask)} from the ablation metafile."""
    import yaml
    with open(osp.join(ABLATIONS, 'metafile.yml')) as f:
        meta = yaml.safe_load(f)
    out = {}
    for model in meta['Models']:
        row = model['Name'][len('siameseim-table3')]
        metrics = {}
        for res in model['Results']:
            metrics.update(res['Metrics'])
        out[row] = dict(lin=metrics['Linear probe top-1'],
                        ap_box=metrics['box AP'],
                        ap_mask=metrics['mask AP'])
    return out


class Table3(Demo):
    """The demo's stages, one pretraining per Table 3 row."""

    def __init__(self, args, rows):
        super().__init__(args)
        from mmengine.config import Config
        self.rows = rows
        self.demo_cfg = Config.fromfile(
            osp.join(ROOT, PRETRAIN_CFGS['siameseim']))
        self.factors = {
            r: table3_factors(Config.fromfile(path))
            for r, path in rows.items()
        }

    def pretrain_cfg(self, method):
        cfg = miniature_cfg(self.factors[method[len('table3'):]],
                            self.demo_cfg)
        if not self.smoke:
            cfg.train_dataloader.dataset.indices = self.args.train_images
        cfg.randomness = dict(seed=0)
        return cfg

    def run(self):
        check_dataset(self.data_root)
        os.makedirs(osp.join(self.wd, 'results'), exist_ok=True)
        t0 = time.time()
        results, walls = {}, {}
        for row in self.rows:
            name = f'table3{row}'
            say(f'row ({row}): {self.factors[row]}')
            start = time.time()
            pre = self.pretrain(name)
            results[row] = self.evaluate(name, pre['checkpoint'])
            timing_path = osp.join(self.wd, 'results', f'{name}_time.json')
            timing = load_json(timing_path)
            if timing is None:
                timing = dict(pretrain_s=pre['wall_s'],
                              total_s=time.time() - start)
                atomic_json(timing_path, timing)
            walls[row] = timing
        floor = self.floor()
        path = self.write_report(results, walls, floor)
        say(f'finished in {(time.time() - t0) / 60:.1f} min')
        say(f'table: {path}')
        return path

    def floor(self):
        """The floor: row (i)'s run (the default SiameseIM; else the first
        row's) at its own initial weights, saved before its first step,
        evaluated like the rows."""
        row = 'i' if 'i' in self.rows else next(iter(self.rows))
        pre = self.pretrain(f'table3{row}')
        path = pre.get('initial_weights')
        if not path or not osp.exists(path):
            sys.exit(f'row ({row}) finished before its initial weights were '
                     f'saved; delete {osp.join(self.wd, "table3" + row)} '
                     'to rerun it')
        return row, self.evaluate(f'table3{row}_initial_weights', path,
                                  arch=f'table3{row}')

    def write_report(self, results, walls, floor=None):
        paper = paper_results()
        fig = osp.join(self.wd, 'table3.png')
        plot_table3(results, paper, fig)
        a = self.args
        yes = lambda v: 'yes' if v else ''  # noqa: E731
        lines = [
            '# Table 3 in miniature (Fashion-MNIST, CPU)', '',
            f'Produced by `python tools/ablation_table3.py` on '
            f'{time.strftime("%Y-%m-%d %H:%M")}'
            f'{" (--smoke: tiny subsets, numbers are not meaningful)" if self.smoke else ""}. '
            'Each row: the demo ViT (128 wide, 4 blocks, patch 4, 32 px) '
            f'pretrained on {"a few" if self.smoke else a.train_images} '
            'Fashion-MNIST training images for 1 epoch with that row\'s '
            'switches (same seed), evaluated like the demo: kNN on '
            f'{a.knn_train} training images, linear probe {a.probe_epochs} '
            f'epochs on {a.probe_train}, 1 % few-shot; top-1 on the 10k test '
            'images. Paper columns: ViT-B/16, 400 epochs on ImageNet-1k. '
            'The miniature does not reproduce ImageNet numbers.', '',
            '| row | target | different views | colour aug | mask | BN/LN | '
            'loss norm | loss | kNN | LIN | few-shot | wall time | '
            'paper LIN | paper AP^b | paper AP^m |',
            '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
        ]
        for row, res in results.items():
            f = self.factors[row]
            p = paper.get(row, {})
            lines.append(
                f'| ({row}) | {f["target"]} | {yes(f["views"] == "different")}'
                f' | {yes(f["colour"])} | {f["mask"]} | {f["norm"]} | '
                f'{f["loss_norm"]} | {f["loss"]} | {res["knn"]:.2f} | '
                f'{res["linear"]:.2f} | {res["fewshot"]:.2f} | '
                f'{walls[row]["total_s"] / 60:.1f} min | {p.get("lin", "-")}'
                f' | {p.get("ap_box", "-")} | {p.get("ap_mask", "-")} |')
        if floor:
            row, res = floor
            lines += [
                '', f'Floor: row ({row})\'s run at its own initial weights '
                '(saved before its first step, evaluated the same way): kNN '
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
            lines.append(f'| ({x}) - ({y}) | {what} | {dp:+.1f} | {dl:+.2f} '
                         f'| {dk:+.2f} | {holds} |')
        lines += ['', '"holds" compares the sign of the linear-probe '
                  'difference with the paper\'s.', '',
                  '![table 3](table3.png)', '']
        path = osp.join(self.wd, 'table3.md')
        with open(path + '.tmp', 'w') as f:
            f.write('\n'.join(lines))
        os.replace(path + '.tmp', path)
        return path


def plot_table3(results, paper, path):
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
    ax.set_title('miniature (Fashion-MNIST, ViT 128-d, 1 epoch)')
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


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--work-dir', default='work_dirs/ablation_table3')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument('--rows', default='',
                        help='comma-separated rows, e.g. a,f,i (default all)')
    parser.add_argument('--train-images', type=int, default=16000,
                        help='pretraining images per row (1 epoch)')
    parser.add_argument('--knn-train', type=int, default=10000)
    parser.add_argument('--probe-train', type=int, default=10000)
    parser.add_argument('--probe-epochs', type=int, default=2)
    parser.add_argument('--fewshot-fraction', type=float, default=0.01)
    parser.add_argument('--smoke', action='store_true',
                        help='tiny subsets, for CI: checks every stage runs')
    parser.add_argument('--smoke-images', type=int, default=128)
    parser.add_argument('--seed', type=int, default=None,
                        help='pretraining seed of every row (default 0)')
    args = parser.parse_args(argv)
    args.epochs = None  # the demo's options: every row trains 1 epoch,
    args.fp32 = False   # in the demo's precision
    return args


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, ROOT)
    import mmsiameseim  # noqa: F401
    rows = row_configs()
    if args.rows:
        wanted = [r.strip() for r in args.rows.split(',') if r.strip()]
        unknown = [r for r in wanted if r not in rows]
        if unknown:
            sys.exit(f'--rows: unknown rows {unknown}; choose from '
                     f'{sorted(rows)}')
        rows = {r: rows[r] for r in wanted}
    return Table3(args, rows).run()


if __name__ == '__main__':
    main()
