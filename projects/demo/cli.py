"""The command-line side of the demo and the studies built on it
(``projects/demo/tools/demo.py``, ``projects/claim/tools/claim_study.py``,
``projects/table3/tools/ablation_table3.py``,
``projects/side_by_side/tools/side_by_side.py``): the
demo config, the dataset check, the pretraining and evaluation set-ups, where
results are published."""
import contextlib
import glob
import os.path as osp
import sys

from mmengine.config import Config

from projects.common.results import REPO as ROOT
from projects.common.results import RESULTS_HOMES

CONFIG = 'configs/demo/fashionmnist_demo.py'
SMOKE_CONFIG = 'configs/demo/fashionmnist_demo_smoke.py'
# rows: the floor (the run's own start); a separately initialised ViT
# (reference_init=True in the demo config)
FLOOR = 'siameseim initial weights'
OTHER_INIT = 'mmpretrain ViT init (not this run\'s start)'
PUBLISHED_DIR = osp.join(ROOT, RESULTS_HOMES['demo'])
WALL_TIME = 'wall_time.json'  # the demo's time, per invocation
FMNIST_FILES = ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')


def say(msg):
    print(f'\033[1m[demo]\033[0m {msg}', flush=True)


@contextlib.contextmanager
def demo_lock(work_dir):
    """Hold ``work_dir``'s lock (the training runs' ``WorkDirLock``) for a
    whole demo invocation, pretraining and evaluation: a second demo into
    the same work dir stops before it does or records anything (exit
    status 1, naming the live one)."""
    from mmsiameseim.engine.runner.work_dir_lock import (WorkDirLock,
                                                         WorkDirLocked)
    lock = WorkDirLock(work_dir)
    try:
        note = lock.acquire()
    except WorkDirLocked as e:
        sys.exit(f'[demo] {e}')
    if note:
        say(note)
    try:
        yield
    finally:
        lock.release()


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
        from projects.demo.settings import check_demo_options
        try:
            check_demo_options(cfg.to_dict(), args.cfg_options)
        except ValueError as error:
            sys.exit(str(error))
        cfg.merge_from_dict(args.cfg_options)
    return cfg


def precision_override(fp32):
    """None (the config's bfloat16) or 'float32' (asked, or no native
    bf16)."""
    from mmsiameseim.evaluation import native_bf16
    if not fp32 and not native_bf16():
        say('this CPU has no native bf16: training in fp32')
    return 'float32' if fp32 or not native_bf16() else None


def pretrain_run_cfg(demo_cfg, path, work_dir, args):
    """The pretraining config at ``path`` set up for its demo run."""
    from projects.demo import prepare_pretrain_cfg
    return prepare_pretrain_cfg(
        Config.fromfile(osp.join(ROOT, path)),
        work_dir,
        data_prefix=osp.abspath(args.data_root) + '/',
        overrides=demo_cfg.pretrain_overrides,
        hook_overrides=demo_cfg.hook_overrides,
        epochs=args.epochs or demo_cfg.pretrain_epochs,
        seed=args.seed,
        precision=precision_override(args.fp32))


def build_protocol(demo_cfg, work_dir, data_root):
    """The demo config's evaluation, bfloat16 on CPUs with native bf16."""
    from mmsiameseim.evaluation import native_bf16
    from projects.common.evaluation import FrozenBackboneProtocol
    return FrozenBackboneProtocol.from_cfg(
        demo_cfg.evaluation,
        work_dir=work_dir,
        data_prefix=osp.abspath(data_root) + '/',
        precision='bfloat16' if native_bf16() else 'float32')


def pixel_floors(protocol):
    """Raw pixels through the protocol's kNN, linear probe and few-shot,
    with no centring as the features get none (the ``raw`` scores of
    :class:`projects.common.evaluation.PixelFloors`)."""
    from projects.common.evaluation import PixelFloors
    return PixelFloors(protocol).evaluate()['raw']


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
    projects/demo/results with ``--publish``, or None (the work dir's only)."""
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
