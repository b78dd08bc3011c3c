import hashlib
import json
import logging
import os
import os.path as osp
from typing import Callable, Optional, Tuple

import numpy as np
import torch
from mmengine.logging import print_log

Features = Tuple[torch.Tensor, torch.Tensor]


def cache_digest(key: object) -> str:
    """A short hash of a JSON-able description (objects fall back to str)."""
    text = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def file_identity(path: Optional[str]) -> Optional[dict]:
    """Path, size and modification time of a file (e.g. a checkpoint), to
    key a cache by; None for None.

    A missing file is an error.
    """
    if not path:
        return None
    if not osp.isfile(path):
        raise FileNotFoundError(f'checkpoint {path} not found')
    stat = os.stat(path)
    return dict(
        path=osp.abspath(path), size=stat.st_size, mtime_ns=stat.st_mtime_ns)


def _key_text(key: dict) -> str:
    return json.dumps(key, sort_keys=True, default=str)


def _read_cache(path: str, key: dict) -> Optional[Features]:
    """The features in ``path`` if it is an intact cache file of ``key``;
    else None, with a warning that names the file and what is wrong."""
    try:
        with np.load(path) as f:
            feats, labels = f['feats'], f['labels']
            stored = str(f['key'])
    except Exception as e:  # noqa: BLE001  (cut, empty, another format)
        problem = f'cannot be read ({type(e).__name__}: {str(e)[:200]})'
    else:
        if stored == _key_text(key) and len(feats) == len(labels):
            return torch.from_numpy(feats), torch.from_numpy(labels)
        problem = 'holds features of another key'
    print_log(
        f'feature cache {path} {problem}: not using it; extracting '
        'the features again',
        logger='current',
        level=logging.WARNING)
    return None


def cached_features(cache_dir: Optional[str], name: str, key: dict,
                    extract: Callable[[], Features]) -> Features:
    """Features of one split, extracted once per ``key``.

    They are stored in ``<cache_dir>/<name>-<hash of key>.npz``; a later
    call with an equal key reads that file instead of calling ``extract``.
    Put into ``key`` everything the features depend on (weights, model and
    pipeline config, the sample list), and nothing else, so that e.g. a
    sweep over classifier settings reuses them. A cache file that cannot
    be read, or whose stored key is not ``key``, is never used: a warning
    names it and the features are extracted again and stored in its place.
    Files are written under a temporary name and renamed when complete.

    Args:
        cache_dir (str, optional): Cache folder; None always extracts.
        name (str): Split name, part of the file name.
        key (dict): JSON-able description of the features.
        extract (callable): Returns (features, labels) when not cached.

    Returns:
        tuple: features (N, D) and labels (N,).
    """
    if cache_dir is None:
        return extract()
    path = osp.join(cache_dir, f'{name}-{cache_digest(key)}.npz')
    if osp.isfile(path):
        cached = _read_cache(path, key)
        if cached is not None:
            print(f'loaded cached features of {len(cached[1])} {name} '
                  f'images from {path}')
            return cached
    feats, labels = extract()
    os.makedirs(cache_dir, exist_ok=True)
    tmp = path[:-len('.npz')] + '.tmp.npz'  # complete files only
    np.savez(
        tmp, feats=feats.numpy(), labels=labels.numpy(), key=_key_text(key))
    os.replace(tmp, path)
    print(f'cached the {name} features in {path}')
    return feats, labels
