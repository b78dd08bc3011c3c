"""Atomic file writes, one scheme for every file the project writes.

A file is written to a hidden temporary name in its own folder
(``.NAME.<pid>.partial``), flushed to disk, then renamed over its final
name (``os.replace``: atomic on POSIX file systems) and the folder flushed.
A process killed mid-write leaves only the temporary file, which no
checkpoint pattern, ``last_checkpoint`` or results reader matches; an
error mid-write removes it.
"""
import contextlib
import json
import os
import os.path as osp
from typing import Any, Iterator, Optional

PARTIAL_SUFFIX = '.partial'


def partial_name(path: str) -> str:
    """The temporary name ``path`` is written under, in the same folder."""
    folder, name = osp.split(path)
    return osp.join(folder, f'.{name}.{os.getpid()}{PARTIAL_SUFFIX}')


def _fsync(path: str) -> None:
    fd = os.open(path or '.', os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(partial: str, path: str) -> None:
    """Flush ``partial`` to disk, rename it to ``path`` and flush the
    folder."""
    _fsync(partial)
    os.replace(partial, path)
    _fsync(osp.dirname(path))


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """The temporary path to write ``path``'s content to; committed over
    ``path`` when the block ends, removed when it raises."""
    partial = partial_name(path)
    try:
        yield partial
        commit(partial, path)
    finally:
        if osp.exists(partial):
            os.remove(partial)


def atomic_write(path: str, text: str) -> None:
    """Write a text file that is always either the old or the new text,
    never empty or cut."""
    with atomic_path(path) as partial, open(partial, 'w') as f:
        f.write(text)


def atomic_torch_save(obj: Any, path: str) -> None:
    """``torch.save`` of ``obj`` to ``path``, atomically: a kill or an
    error mid-write leaves ``path`` as it was (absent, or the previous
    file), never a partial file under its name."""
    import torch
    with atomic_path(path) as partial:
        torch.save(obj, partial)


def atomic_json(path: str, obj: Any) -> None:
    """:func:`atomic_write` of ``obj`` as indented JSON."""
    atomic_write(path, json.dumps(obj, indent=2))


def load_json(path: str) -> Optional[Any]:
    """The JSON content of ``path``, or None when there is no such file."""
    if osp.exists(path):
        with open(path) as f:
            return json.load(f)
    return None
