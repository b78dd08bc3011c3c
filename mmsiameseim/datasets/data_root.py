"""One setting for where a config's data are: its ``data_root``.

The shipped configs name their data folder once, as the top-level
``data_root``, but mmengine substitutes it into each dataloader, hook and
evaluator when the config is parsed: overriding ``data_root`` afterwards
(``--cfg-options data_root=DIR``) changes nothing that reads data. This
moves every path under the config's ``data_root`` to the new folder; the
plugin's ``tools/train.py`` and ``tools/test.py`` (what ``mim train`` and
``mim test`` run) apply it to ``--cfg-options data_root=DIR``.
"""
import os.path as osp
from typing import Any, Tuple

from mmengine.config import Config


def _moved(value: Any, old: str, new: str) -> Tuple[Any, int]:
    """``value`` with every string under ``old`` moved under ``new``, and
    how many were."""
    if isinstance(value, dict):
        count = 0
        for key in list(value):
            if key == 'data_root' and value[key] is None and 'type' in value:
                # a dataset whose root is required (own-folder configs)
                value[key], n = new, 1
            else:
                value[key], n = _moved(value[key], old, new)
            count += n
        return value, count
    if isinstance(value, (list, tuple)):
        items = [_moved(v, old, new) for v in value]
        return type(value)(v for v, _ in items), sum(n for _, n in items)
    if isinstance(value, str) and value and old:
        path = osp.normpath(value)
        if path == old or path.startswith(old + osp.sep):
            moved = osp.join(new, osp.relpath(path, old)) \
                if path != old else new
            if value.endswith(osp.sep) and not moved.endswith(osp.sep):
                moved += osp.sep
            return moved, 1
    return value, 0


def set_data_root(cfg: Config, data_root: str) -> int:
    """Point ``cfg`` at ``data_root``: its ``data_root`` and every path
    under its former value (datasets' roots and prefixes, annotation files
    of evaluators, hooks' datasets) move there, and so does every dataset
    whose ``data_root`` is None (to be given: the own-folder configs).
    Returns how many values moved.

    Raises:
        KeyError: Nothing to move (no top-level ``data_root``, or no path
            under it, and no dataset root to be given); the message names
            the config and what to set instead.
    """
    old = cfg.get('data_root')
    old = osp.normpath(old) if isinstance(old, str) and old else ''
    body = {k: v for k, v in cfg.to_dict().items() if k != 'data_root'}
    body, count = _moved(body, old, osp.normpath(data_root))
    if not count:
        raise KeyError(
            f'{cfg.filename or "the config"} has no data path under a '
            'top-level data_root, nor a dataset whose data_root is to be '
            'given: set each dataloader\'s dataset data_root or data_prefix '
            'instead (--cfg-options train_dataloader.dataset.data_root=DIR '
            '...)')
    for key, value in body.items():
        cfg[key] = value
    cfg.data_root = data_root
    return count
