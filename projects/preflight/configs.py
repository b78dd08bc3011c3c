"""The shipped configs a preflight covers, found on disk (so a new config
cannot be forgotten), and how heavy each one is on a CPU."""
import glob
import os.path as osp
from typing import Dict, List

from projects.common.results import REPO

CONFIG_DIR = osp.join(REPO, 'configs')

# Folders whose configs are not preflighted, and why.
EXCLUDED = {
    '_base_':
    'fragments that other configs inherit, not runnable alone',
    'smoke':
    'the benchmark configs shrunk for CPU smoke runs; the '
    'benchmark configs themselves are preflighted at full size',
    'demo':
    "the CPU demo's own configs, run end to end by `make demo` and "
    'its tests (projects/demo/tests/test_demo.py)',
}
# A config whose name says one of these runs on Fashion-MNIST at the CPU
# budget (a tiny ViT): quick enough for `make test`; except the mix
# catalogue (configs/pretrain/mix: seven algorithms, a ViT-L among them),
# which goes to the slow tier as a whole.
QUICK_MARKERS = ('fashionmnist', )
SLOW_FOLDERS = ('mix', )


def excluded_reason(path: str) -> str:
    """Why the config at ``path`` is not preflighted ('' when it is)."""
    parts = osp.relpath(path, CONFIG_DIR).split(osp.sep)[:-1]
    for part in parts:
        if part in EXCLUDED:
            return EXCLUDED[part]
    return ''


def shipped_configs(config_dir: str = CONFIG_DIR) -> List[str]:
    """Every runnable config under ``config_dir`` (paths relative to the
    repository), sorted; ``_base_``, ``smoke`` and ``demo`` folders
    excluded (see ``EXCLUDED``)."""
    paths = glob.glob(osp.join(config_dir, '**', '*.py'), recursive=True)
    return sorted(
        osp.relpath(p, REPO) for p in paths if not excluded_reason(p))


def is_quick(config: str) -> bool:
    """Whether a config trains a tiny model (Fashion-MNIST budget), so its
    preflight belongs in ``make test`` rather than the slow tier."""
    folders = osp.normpath(config).split(osp.sep)[:-1]
    return (any(m in osp.basename(config) for m in QUICK_MARKERS)
            and not any(f in folders for f in SLOW_FOLDERS))


def config_groups(config_dir: str = CONFIG_DIR) -> Dict[str, List[str]]:
    """{'quick': [...], 'heavy': [...]} of :func:`shipped_configs`."""
    configs = shipped_configs(config_dir)
    return dict(
        quick=[c for c in configs if is_quick(c)],
        heavy=[c for c in configs if not is_quick(c)])
