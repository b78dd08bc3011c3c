"""The checkpoint files of a work dir: written atomically (the scheme of
:mod:`mmsiameseim.atomic_io`: ``.iter_600.pth.<pid>.partial``, renamed
when complete), checked for damage, listed.
"""
import glob
import os.path as osp
import zipfile
from typing import List, Optional

from ..atomic_io import PARTIAL_SUFFIX

LAST_CHECKPOINT = 'last_checkpoint'
# the names mmengine's CheckpointHook gives checkpoints (epoch, iteration,
# best)
CHECKPOINT_PATTERNS = ('epoch_*.pth', 'iter_*.pth', 'best_*.pth')


def checkpoint_files(work_dir: str) -> List[str]:
    """The checkpoints in ``work_dir`` (not its sub-folders), newest
    first."""
    paths = {
        p
        for pattern in CHECKPOINT_PATTERNS
        for p in glob.glob(osp.join(work_dir, pattern))
    }
    return sorted(paths, key=lambda p: (osp.getmtime(p), p), reverse=True)


def checkpoint_names(paths: List[str], shown: int = 5) -> str:
    """The file names of ``paths`` for a message: the first ``shown``,
    then how many more."""
    names = [osp.basename(p) for p in paths]
    more = f' and {len(names) - shown} more' if len(names) > shown else ''
    return ', '.join(names[:shown]) + more


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
