"""The main job: pretrain and evaluate SiameseIM on Fashion-MNIST, on a CPU.

    python tools/demo.py [--work-dir work_dirs/demo] [--compare mae,mocov3]
                         [--smoke] [--seed S] [--epochs E] [--fp32]
                         [--publish] [--results-dir DIR]
                         [--config configs/demo/fashionmnist_demo.py]
                         [--cfg-options KEY=VALUE ...]

Stages (each is reused when a rerun finds it finished; pretraining resumes
from its last checkpoint):

1. pretrain SiameseIM on the training images (mmengine Runner; its
   ``OnlineKNNHook`` logs a kNN curve as it trains);
2. for SiameseIM, its own initial weights (saved by
   ``SaveInitialWeightsHook`` before step 1: the floor of what pretraining
   adds), a separately initialised mmpretrain ViT of the same architecture
   (for reference) and the optional peers: the frozen-backbone protocol of
   ``mmsiameseim.evaluation.FrozenBackboneProtocol`` (kNN, linear probe,
   few-shot), plus kNN on raw pixels;
3. ``WORK_DIR/report.md`` with a results table and PNG figures
   (``figures/``: training_curves, knn_curve, accuracy, two_view_sample),
   and the results file ``WORK_DIR/demo.json``. The checkout's
   ``docs/results/demo.json`` (the published figures, whose table the
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
import glob
import os
import os.path as osp
import sys

from mmengine.config import Config, DictAction

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
CONFIG = 'configs/demo/fashionmnist_demo.py'
SMOKE_CONFIG = 'configs/demo/fashionmnist_demo_smoke.py'
# rows: the floor (the run's own start); a separately initialised ViT
FLOOR = 'siameseim initial weights'
OTHER_INIT = 'mmpretrain ViT init (not this run\'s start)'
PUBLISHED_DIR = osp.join(ROOT, 'docs', 'results')
WALL_TIME = 'wall_time.json'  # the demo's time, per invocation
FMNIST_FILES = ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')


def say(msg):
    print(f'\033[1m[demo]\033[0m {msg}', flush=True)


def check_dataset(data_root):
    missing = [
        f for f in FMNIST_FILES if not osp.isfile(osp.join(data_root, f))
    ]
    if missing:
        sys.exit(f'Fashion-MNIST is missing in {data_root}: {missing}.\n'
                 'Run `bash tools/setup_env.sh` (installs the Debian package '
                 'dataset-fashion-mnist and un-gzips it there), or put the '
                 'four un-gzipped files there yourself.')


def pretrain_config_path(method, demo_cfg):
    """The pretraining config of a ``--compare`` entry: a name of the demo
    config, a mix catalogue name, or a config path; None when none."""
    if method in demo_cfg.pretrain_configs:
        return demo_cfg.pretrain_configs[method]
    mix = osp.join(demo_cfg.mix_dir, method + '.py')
    if osp.isfile(osp.join(ROOT, mix)):
        return mix
    if method.endswith('.py') and osp.isfile(method):
        return osp.abspath(method)
    return None


def method_name(method):
    """Work-dir and report name of a ``--compare`` entry."""
    return osp.splitext(osp.basename(method))[0] \
        if method.endswith('.py') else method


def load_demo_config(args):
    cfg = Config.fromfile(
        osp.join(ROOT, args.config
                 or (SMOKE_CONFIG if args.smoke else CONFIG)))
    if args.cfg_options:
        from mmsiameseim_lab.demo.settings import check_demo_options
        try:
            check_demo_options(cfg.to_dict(), args.cfg_options)
        except ValueError as error:
            sys.exit(str(error))
        cfg.merge_from_dict(args.cfg_options)
    return cfg


def training_precision(fp32):
    """None (the config's bfloat16) or 'float32' (asked, or no native
    bf16)."""
    from mmsiameseim.evaluation import native_bf16
    if not fp32 and not native_bf16():
        say('this CPU has no native bf16: training in fp32')
    return 'float32' if fp32 or not native_bf16() else None


def pretrain_run_cfg(demo_cfg, path, work_dir, args):
    """The pretraining config at ``path`` set up for its demo run."""
    from mmsiameseim_lab.demo import prepare_pretrain_cfg
    return prepare_pretrain_cfg(
        Config.fromfile(osp.join(ROOT, path)),
        work_dir,
        data_prefix=osp.abspath(args.data_root) + '/',
        overrides=demo_cfg.pretrain_overrides,
        hook_overrides=demo_cfg.hook_overrides,
        epochs=args.epochs or demo_cfg.pretrain_epochs,
        seed=args.seed,
        precision=training_precision(args.fp32))


def build_protocol(demo_cfg, work_dir, data_root):
    """The demo config's evaluation, bfloat16 on CPUs with native bf16."""
    from mmsiameseim.evaluation import FrozenBackboneProtocol, native_bf16
    return FrozenBackboneProtocol.from_cfg(
        demo_cfg.evaluation,
        work_dir=work_dir,
        data_prefix=osp.abspath(data_root) + '/',
        precision='bfloat16' if native_bf16() else 'float32')


def methods_of(args, demo_cfg):
    """{method name: pretraining config path}, SiameseIM first."""
    methods = {'siameseim': demo_cfg.pretrain_configs['siameseim']}
    for m in [m for m in args.compare if m]:
        path = pretrain_config_path(m, demo_cfg)
        if path is None:
            mix = sorted(
                osp.basename(p)[:-3]
                for p in glob.glob(osp.join(ROOT, demo_cfg.mix_dir, '*.py')))
            names = sorted(set(demo_cfg.pretrain_configs) - {'siameseim'})
            sys.exit(f'--compare: unknown method {m!r}; choose from {names}, '
                     f'the mix catalogue {mix} or a config path')
        methods[method_name(m)] = path
    return methods


def publish_dir(args):
    """Where a copy of the results file is published: ``--results-dir``,
    docs/results with ``--publish``, or None (the work dir's only)."""
    if args.results_dir:
        return osp.abspath(args.results_dir)
    if args.publish:
        return PUBLISHED_DIR
    return None


def check_publish(args):
    """Refuse to publish the numbers of ``--smoke`` as the project's."""
    if args.smoke and publish_dir(args) == PUBLISHED_DIR:
        sys.exit('--publish --smoke: the smoke numbers are not meaningful '
                 f'and would replace the published {PUBLISHED_DIR}/demo.json;'
                 ' publish a full run, or give --results-dir DIR for another '
                 'folder')


def run(args):
    from mmsiameseim_lab.demo import config_off_console
    with config_off_console():
        return _run(args)


def _run(args):
    from mmsiameseim_lab.demo import WallTimeLedger
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
    with WallTimeLedger(osp.join(wd, WALL_TIME)) as clock:
        return _pretrain_and_evaluate(args, demo_cfg, wd, run_cfgs, clock)


def _pretrain_and_evaluate(args, demo_cfg, wd, run_cfgs, clock):
    from mmsiameseim_lab.demo import (demo_results_data, initial_weights,
                                      pretrain_once, write_demo_report)
    from mmsiameseim_lab.results import write_results
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
    results[OTHER_INIT] = protocol.evaluate('random_init', None)
    pixel = protocol.pixel_knn()
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
        say('docs/results/ not changed (--publish writes the published '
            'figures there)')
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
        help='also write the results file to docs/results/demo.json, the '
        'published figures (the work dir always has WORK_DIR/demo.json)')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='also write the results file demo.json to this folder '
        '(instead of docs/results with --publish)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    return run(args)


if __name__ == '__main__':
    main()
