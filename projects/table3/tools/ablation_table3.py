"""Table 3 of the paper in miniature: every ablation row on Fashion-MNIST.

    python projects/table3/tools/ablation_table3.py
        [--work-dir work_dirs/ablation_table3] [--rows a,b,...] [--seed S]
        [--smoke]
        [--config projects/table3/configs/table3_miniature.py] [--cfg-options
        K=V ...]
        [--results-dir DIR]

Each row's switches (target type, views, colour augmentation, mask type,
BN/LN, loss normalisation, dense/global loss), read off its ViT-B/16 ImageNet
config in configs/pretrain/ablations (``projects.table3.read_row``),
are applied to the demo's SiameseIM config
(``projects.table3.apply_table3_row``), and the row is
pretrained for the same budget as every other row, then evaluated like the
demo (``FrozenBackboneProtocol``). Writes table3.md (laid out like the
paper's Table 3, with the paper's numbers beside ours and which of the
paper's comparisons hold), table3.png and the results file table3.json
(``--results-dir``: projects/table3/results, whose table the docs render;
with
``--smoke``, the work dir). Finished rows are reused when the command is run
again. Budget and protocol: the config
(``--smoke``: projects/table3/configs/table3_miniature_smoke.py).
"""
import argparse
import os
import os.path as osp
import sys
import time

from mmengine.config import Config, DictAction

from projects.demo.cli import (ROOT, build_protocol, check_dataset,
                               precision_override, say)

CONFIG = 'projects/table3/configs/table3_miniature.py'
SMOKE_CONFIG = 'projects/table3/configs/table3_miniature_smoke.py'


def row_run_cfg(t3, factors, row, work_dir, args):
    """Row ``row``'s miniature pretraining config, set up for its run."""
    from projects.demo import prepare_pretrain_cfg
    from projects.table3 import apply_table3_row
    base = Config.fromfile(osp.join(ROOT, t3.pretrain_configs['siameseim']))
    return prepare_pretrain_cfg(
        apply_table3_row(base, factors[row]),
        osp.join(work_dir, f'table3{row}'),
        data_prefix=osp.abspath(args.data_root) + '/',
        overrides=t3.pretrain_overrides,
        hook_overrides=t3.hook_overrides,
        epochs=t3.pretrain_epochs,
        seed=t3.seed if args.seed is None else args.seed,
        precision=precision_override(False))


def run(args, rows):
    from mmsiameseim.atomic_io import atomic_json, load_json
    from projects.common.results import write_results
    from projects.demo import (describe_pretraining, initial_weights,
                               pretrain_once)
    from projects.table3 import paper_results, read_row, write_table3_report
    check_dataset(osp.abspath(args.data_root))
    t3 = Config.fromfile(
        osp.join(ROOT, args.config
                 or (SMOKE_CONFIG if args.smoke else CONFIG)))
    if args.cfg_options:
        t3.merge_from_dict(args.cfg_options)
    wd = osp.abspath(args.work_dir)
    factors = {r: read_row(p) for r, p in rows.items()}
    protocol = build_protocol(t3, wd, args.data_root)
    t0 = time.time()
    results, walls, cfgs = {}, {}, {}
    for row in rows:
        say(f'row ({row}): {factors[row]}')
        start = time.time()
        cfgs[row] = row_run_cfg(t3, factors, row, wd, args)
        pre = pretrain_once(cfgs[row])
        results[row] = protocol.evaluate(f'table3{row}', pre['checkpoint'],
                                         cfgs[row].model)
        timing_path = osp.join(wd, 'results', f'table3{row}_time.json')
        if load_json(timing_path) is None:
            atomic_json(
                timing_path,
                dict(pretrain_s=pre['wall_s'], total_s=time.time() - start))
        walls[row] = load_json(timing_path)
    # the floor: row (i)'s run (the default SiameseIM; else the first
    # row's) at its own initial weights, evaluated like the rows
    row = 'i' if 'i' in rows else next(iter(rows))
    try:
        path = initial_weights(pretrain_once(cfgs[row]))
    except FileNotFoundError as e:
        sys.exit(str(e))
    floor = row, protocol.evaluate(f'table3{row}_initial_weights', path,
                                   cfgs[row].model)
    note = ' (--smoke: tiny subsets, numbers are not meaningful)' \
        if args.smoke else ''
    paper = paper_results(osp.join(ROOT, t3.row_config_dir, 'metafile.yml'))
    settings = describe_pretraining(cfgs[row])
    path = write_table3_report(
        osp.join(wd, 'table3.md'), factors, results, walls, paper, settings,
        protocol.describe(), floor, note)
    results_file = write_results(
        'table3',
        dict(
            factors=factors,
            results=results,
            walls=walls,
            paper=paper,
            floor=list(floor),
            settings=settings,
            protocol=protocol.describe(),
            smoke=args.smoke),
        results_dir=args.results_dir or (wd if args.smoke else None))
    say(f'finished in {(time.time() - t0) / 60:.1f} min')
    say(f'table: {path}')
    say(f'results file: {results_file}')
    return path


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--config',
        default=None,
        help=f'settings (default {CONFIG}; --smoke: '
        f'{SMOKE_CONFIG})')
    parser.add_argument('--work-dir', default='work_dirs/ablation_table3')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument(
        '--rows',
        default='',
        help='comma-separated rows, e.g. a,f,i (default all)')
    parser.add_argument(
        '--smoke',
        action='store_true',
        help='tiny subsets, for CI: checks every stage runs')
    parser.add_argument(
        '--seed',
        type=int,
        default=None,
        help='pretraining seed of every row (default: the '
        'config\'s, 0)')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override settings, e.g. '
        'pretrain_overrides.train_dataloader.dataset.'
        'indices=8000')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='folder of the results file table3.json '
        '(default projects/table3/results; with --smoke the work dir)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    from projects.table3 import row_configs
    t3 = Config.fromfile(osp.join(ROOT, args.config or CONFIG))
    rows = row_configs(osp.join(ROOT, t3.row_config_dir))
    if args.rows:
        wanted = [r.strip() for r in args.rows.split(',') if r.strip()]
        unknown = [r for r in wanted if r not in rows]
        if unknown:
            sys.exit(f'--rows: unknown rows {unknown}; choose from '
                     f'{sorted(rows)}')
        rows = {r: rows[r] for r in wanted}
    return run(args, rows)


if __name__ == '__main__':
    main()
