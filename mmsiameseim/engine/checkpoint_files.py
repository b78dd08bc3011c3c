"""The checkpoint files of a work dir: written so that a kill never leaves
a partial file under a checkpoint's name, checked for damage, listed.

A checkpoint is written to a hidden temporary name in its own folder
(``.iter_600.pth.<pid>.partial``), flushed to disk, then renamed over its
final name (``os.replace``: atomic on POSIX file systems). A process killed
mid-write leaves only the temporary file, which no checkpoint pattern or
``last_checkpoint`` matches.
"""
import glob
import os
import os.path as osp
import zipfile
from typing import List, Optional

LAST_CHECKPOINT = 'last_checkpoint'
# the names mmengine's CheckpointHook gives checkpoints (epoch, iteration,
# best)
CHECKPOINT_PATTERNS = ('epoch_*.pth', 'iter_*.pth', 'best_*.pth')
PARTIAL_SUFFIX = '.partial'


def partial_name(filename: str) -> str:
    """The temporary name ``filename`` is written under, in the same
    folder."""
    folder, name = osp.split(filename)
    return osp.join(folder, f'.{name}.{os.getpid()}{PARTIAL_SUFFIX}')


def _fsync_dir(folder: str) -> None:
    fd = os.open(folder or '.', os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(partial: str, path: str) -> None:
    """Flush ``partial`` to disk and rename it to ``path``."""
    fd = os.open(partial, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)
    _fsync_dir(osp.dirname(path))


def write_text_atomic(path: str, text: str) -> None:
    """Write a small text file (``last_checkpoint``) so that it is always
    either the old or the new text, never empty or cut."""
    partial = partial_name(path)
    with open(partial, 'w') as f:
        f.write(text)
    commit(partial, path)


def checkpoint_files(work_dir: str) -> List[str]:
    """The checkpoints in ``work_dir`` (not its sub-folders), newest
    first."""
    paths = {
        p
        for pattern in CHECKPOINT_PATTERNS
        for p in glob.glob(osp.join(work_dir, pattern))
    }
    return sorted(paths, key=lambda p: (osp.getmtime(p), p), reverse=True)


def partial_files(work_dir: str) -> List[str]:
    """Temporary files of checkpoint writes that did not finish."""
    return sorted(glob.glob(osp.join(work_dir, f'.*{PARTIAL_SUFFIX}')))


def checkpoint_damage(path: str) -> Optional[str]:
    """None when ``path`` is a complete checkpoint file (a torch zip
    archive whose members all pass their CRC check), else what is wrong."""
    if not osp.isfile(path):
        return 'the file does not exist'
    size = osp.getsize(path)
    if size == 0:
        return 'the file is empty (0 bytes)'
    with open(path, 'rb') as f:
        head = f.read(64)
    if not zipfile.is_zipfile(path):
        if head.startswith(b'PK'):
            return (f'the file is cut short ({size} bytes, no zip directory '
                    'at its end): a write that did not finish')
        try:
            head.decode('utf-8')
        except UnicodeDecodeError:
            return (f'the file is not a torch checkpoint ({size} bytes, '
                    f'starts with {head[:8]!r})')
        return (f'the file is text, not a torch checkpoint ({size} bytes, '
                f'starts with {head[:40].decode("utf-8")!r})')
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        return f'the file is damaged ({size} bytes): {e}'
    if bad is not None:
        return (f'the file is damaged ({size} bytes): its member {bad} '
                'fails its CRC check')
    return None


def newest_intact_checkpoint(work_dir: str,
                             exclude: Optional[str] = None) -> Optional[str]:
    """The newest checkpoint of ``work_dir`` that is not damaged."""
    for path in checkpoint_files(work_dir):
        if exclude is not None and osp.abspath(path) == osp.abspath(exclude):
            continue
        if checkpoint_damage(path) is None:
            return path
    return None


def read_last_checkpoint(work_dir: str) -> Optional[str]:
    """The path ``{work_dir}/last_checkpoint`` names, '' when that file is
    empty, None when there is none."""
    path = osp.join(work_dir, LAST_CHECKPOINT)
    if not osp.exists(path):
        return None
    with open(path) as f:
        return f.read().strip()
