"""The one rule that keys every published record of a study: what
determines its numbers, read from the parsed and resolved configs it ran
(their values, bases followed: never the files' bytes, so a comment or a
reformatting orphans nothing) and the plugin's version.

A record whose key is the one its study computes today is current; one
from another set of values is stale, whatever host took either. The host
is a source of variation like the seed: each record carries it
(:func:`projects.common.results.host`) and the tables count runs per host.
"""
import functools
import os.path as osp
from typing import Callable, Dict, List, Optional, Tuple

from mmsiameseim.evaluation.feature_cache import cache_digest
from mmsiameseim.version import __version__
from projects.common.results import REPO


def portable_values(values: object, root: str = REPO) -> object:
    """``values`` with every string that is a path under ``root`` written
    relative to it (a config's ``{{fileDirname}}`` paths are absolute), so
    that a checkout elsewhere reads the same values."""
    prefix = osp.realpath(root) + osp.sep
    if isinstance(values, dict):
        return {k: portable_values(v, root) for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        return [portable_values(v, root) for v in values]
    if isinstance(values, str) and osp.isabs(values):
        path = osp.normpath(values)
        if (path + osp.sep).startswith(prefix):
            return osp.relpath(path, prefix)
    return values


def values_key(values: object, root: str = REPO) -> str:
    """The key of a resolved config's values (a dict, e.g. a run's dumped
    config) and of the plugin's version: 16 hex digits."""
    return cache_digest(
        dict(values=portable_values(values, root), plugin=__version__))


def config_key(config: str, root: str = REPO) -> str:
    """The key of the config file ``config`` (from ``root``, or absolute)
    as a run reads it: parsed with its bases followed."""
    path = config if osp.isabs(config) else osp.join(root, config)
    with open(path, 'rb') as f:
        text = f.read()
    return _parsed_key(path, root, text)


@functools.lru_cache(maxsize=None)
def _parsed_key(path: str, root: str, text: bytes) -> str:
    """Parsed once per process and text of the file (the cache reads the
    leaf's bytes only: a base edited within one process is not seen)."""
    from mmengine.config import Config
    return values_key(Config.fromfile(path).to_dict(), root)


# results name -> its check: the keys of its records that this code would
# not reuse (their configs' values or the plugin's version differ), and
# how many records it holds
StaleCheck = Callable[[dict], Tuple[List[str], int]]
_STALE_CHECKS: Dict[str, StaleCheck] = {}


def stale_check(*names: str) -> Callable[[StaleCheck], StaleCheck]:
    """Register the check of the results files ``names`` (a study's
    tables module does, beside its renderers)."""

    def register(check: StaleCheck) -> StaleCheck:
        for name in names:
            _STALE_CHECKS[name] = check
        return check

    return register


def stale_records(name: str, data: dict) -> Optional[Tuple[List[str], int]]:
    """(stale record keys, number of records) of results file ``name``'s
    ``data`` under this rule; None where its records carry no key."""
    check = _STALE_CHECKS.get(name)
    return None if check is None else check(data)
