"""The main job: pretrain and evaluate SiameseIM on Fashion-MNIST, on a CPU.

    python projects/demo/tools/demo.py [--work-dir work_dirs/demo]
        [--compare mae,mocov3] [--smoke] [--seed S] [--epochs E] [--fp32]
        [--publish] [--results-dir DIR]
        [--config configs/demo/fashionmnist_demo.py]
        [--cfg-options KEY=VALUE ...]

Stages (each is reused when a rerun finds it finished; pretraining resumes
from its last checkpoint):

1. pretrain SiameseIM on the training images (mmengine Runner; its
   ``OnlineKNNHook`` logs a kNN curve as it trains);
2. for SiameseIM, its own initial weights (saved by
   ``SaveInitialWeightsHook`` before step 1: the floor of what pretraining
   adds) and the optional peers: the frozen-backbone protocol of
   ``projects.common.evaluation.FrozenBackboneProtocol`` (kNN, linear probe,
   few-shot); raw pixels through the same three
   (``projects.common.evaluation.PixelFloors``); with
   ``--cfg-options reference_init=True``, a separately initialised
   mmpretrain ViT of the same architecture too (for reference);
3. ``WORK_DIR/report.md`` with a results table and PNG figures
   (``figures/``: training_curves, knn_curve, accuracy, two_view_sample),
   and the results file ``WORK_DIR/demo.json``. The checkout's
   ``projects/demo/results/demo.json`` (the published figures, whose table the
   README renders) is written only when asked: ``--publish`` (refused with
   ``--smoke``), or ``--results-dir DIR`` for another folder.

Wall times are summed over the invocations of the work dir: a demo killed
and rerun (it resumes) counts the time of every invocation
(``WORK_DIR/wall_time.json``, ``WORK_DIR/METHOD/pretrain_wall_time.json``).

The console shows a short header per run (config, data, model size,
output folder); the full configs are kept in each run's work dir, not
printed.

Every number (subsets, k, T, epochs, ...) comes from the demo config.
"""
import argparse
import os
import os.path as osp
import sys

from mmengine.config import DictAction

from projects.demo.cli import (CONFIG, FLOOR, OTHER_INIT, ROOT, SMOKE_CONFIG,
                               WALL_TIME, build_protocol, check_dataset,
                               check_publish, demo_lock, load_demo_config,
                               methods_of, pixel_floors, pretrain_run_cfg,
                               publish_dir, say)


def run(args):
    from projects.demo import quiet_console
    with quiet_console():
        return _run(args)


def _run(args):
    from projects.demo import WallTimeLedger
    check_publish(args)
    data_prefix = osp.abspath(args.data_root) + '/'
    check_dataset(data_prefix)
    demo_cfg = load_demo_config(args)
    wd = osp.abspath(args.work_dir)
    methods = methods_of(args, demo_cfg)
    run_cfgs = {
        m: pretrain_run_cfg(demo_cfg, p, osp.join(wd, m), args)
        for m, p in methods.items()
    }
    # the lock first: a refused invocation records no time
    with demo_lock(wd), WallTimeLedger(osp.join(wd, WALL_TIME)) as clock:
        return _pretrain_and_evaluate(args, demo_cfg, wd, run_cfgs, clock)


def _pretrain_and_evaluate(args, demo_cfg, wd, run_cfgs, clock):
    from projects.common.results import write_results
    from projects.demo import (demo_results_data, initial_weights,
                               pretrain_once, write_demo_report)
    data_prefix = osp.abspath(args.data_root) + '/'
    methods = list(run_cfgs)
    pretrain = {}
    for m, cfg in run_cfgs.items():
        say(f'{m}: pretraining ({cfg.train_cfg.max_epochs} epoch(s), work '
            f'dir {cfg.work_dir}); progress and ETA below')
        pretrain[m] = pretrain_once(cfg)
    protocol = build_protocol(demo_cfg, wd, args.data_root)
    results = {
        m: protocol.evaluate(m, pretrain[m]['checkpoint'], run_cfgs[m].model)
        for m in methods
    }
    try:  # the floor: the run's own initial weights
        floor = initial_weights(pretrain['siameseim'])
    except FileNotFoundError as e:
        sys.exit(str(e))
    results[FLOOR] = protocol.evaluate('siameseim_initial_weights', floor,
                                       run_cfgs['siameseim'].model)
    if demo_cfg.get('reference_init', False):
        results[OTHER_INIT] = protocol.evaluate('random_init', None)
    pixel = pixel_floors(protocol)
    note = ' (--smoke: tiny subsets, numbers are not meaningful)' * \
        args.smoke
    path = write_demo_report(wd, run_cfgs, pretrain, results, pixel, protocol,
                             FLOOR, OTHER_INIT, note, data_prefix)
    wall, runs = clock.total_s(), len(clock.invocations())
    data = demo_results_data(
        results,
        pretrain,
        pixel,
        wall,
        osp.relpath(demo_cfg.filename, ROOT),
        args.smoke,
        invocations=runs)
    results_file = write_results('demo', data, results_dir=wd)
    published = publish_dir(args)
    if published:
        published = write_results('demo', data, results_dir=published)
    say(f'finished in {wall / 60:.1f} min' +
        (f' (summed over the {runs} invocations of {wd}; each is in '
         f'{WALL_TIME})' if runs > 1 else ''))
    say(f'report: {path}')
    say(f'results file: {results_file}')
    if published:
        say(f'published: {published}')
    else:
        say('projects/demo/results/ not changed (--publish writes the '
            'published figures there)')
    return path


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--config',
        default=None,
        help=f'demo settings (default {CONFIG}; --smoke: '
        f'{SMOKE_CONFIG})')
    parser.add_argument('--work-dir', default='work_dirs/demo')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument(
        '--compare',
        default='',
        type=lambda s: [m.strip() for m in s.split(',')],
        help='peers to pretrain and evaluate identically, '
        'e.g. mae,mocov3,siameseim-target16, a config name '
        'of configs/pretrain/mix/ (without .py) or a path')
    parser.add_argument(
        '--epochs',
        type=int,
        default=None,
        help='override the pretraining epochs')
    parser.add_argument(
        '--seed',
        type=int,
        default=None,
        help='pretraining seed (default: the config\'s, 0); '
        'evaluation always uses seed 0')
    parser.add_argument(
        '--fp32',
        action='store_true',
        help='pretrain in fp32 (a plain OptimWrapper) even '
        'on a CPU with bf16')
    parser.add_argument(
        '--smoke',
        action='store_true',
        help='tiny subsets, for CI: checks every stage runs')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override demo config keys, e.g. '
        'evaluation.knn.k=10')
    parser.add_argument(
        '--publish',
        action='store_true',
        help='also write the results file to '
        'projects/demo/results/demo.json, the '
        'published figures (the work dir always has WORK_DIR/demo.json)')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='also write the results file demo.json to this folder '
        '(instead of projects/demo/results with --publish)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    return run(args)


if __name__ == '__main__':
    main()
