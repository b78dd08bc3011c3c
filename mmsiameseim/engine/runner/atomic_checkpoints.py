"""Atomic checkpoints: every checkpoint is written under a temporary name in
its folder and renamed when complete (the scheme of
:mod:`mmsiameseim.atomic_io`), so a kill or a full disk never leaves a cut
file under a checkpoint's name; every ``CheckpointHook`` of the config runs
as :class:`~mmsiameseim.engine.hooks.AtomicCheckpointHook`
(``last_checkpoint`` replaced atomically, the oldest checkpoint deleted only
after the new one is complete); temporary files of an interrupted write are
removed (and logged) when the next run starts.
"""
import os
import os.path as osp
import shutil
from logging import Logger
from typing import Callable, Union

from mmengine.dist import master_only
from mmengine.hooks import CheckpointHook, Hook

from ...atomic_io import commit, partial_name
from ..checkpoint_files import newest_intact_checkpoint, partial_files
from ..hooks.atomic_checkpoint_hook import AtomicCheckpointHook


def atomic_hook(hook: Union[dict, Hook]) -> Union[dict, Hook]:
    """``hook``, with a ``CheckpointHook`` config turned into an
    ``AtomicCheckpointHook`` one (with the same settings)."""
    if isinstance(hook, dict) and hook.get('type') in ('CheckpointHook',
                                                       CheckpointHook):
        return dict(hook, type=AtomicCheckpointHook)
    return hook


def save_atomically(save: Callable, out_dir: str, filename: str, args: tuple,
                    work_dir: str) -> None:
    """Write the checkpoint ``filename`` with ``save`` (mmengine's
    ``Runner.save_checkpoint``, called as ``save(out_dir, name, *args)``)
    under a temporary name, renamed when complete. Other backends
    (``file_client_args`` or ``backend_args``, the first and last of
    ``args``, or a URL) write as mmengine does.

    Raises:
        OSError: the write failed; the message names the file, the
            system's reason, the free space and the checkpoints left intact
            in ``work_dir`` (the temporary file is removed).
    """
    file_client_args, backend_args = args[0], args[-1]
    if file_client_args or backend_args or '://' in str(out_dir):
        return save(out_dir, filename, *args)
    partial = partial_name(filename)
    try:
        save(out_dir, partial, *args)
        commit(osp.join(out_dir, partial), osp.join(out_dir, filename))
    except BaseException as error:
        path = osp.join(out_dir, partial)
        if osp.exists(path):
            os.remove(path)
        if isinstance(error, OSError):
            raise OSError(error.errno,
                          _write_failure(out_dir, filename, error,
                                         work_dir)) from error
        raise


def _write_failure(out_dir: str, filename: str, error: OSError,
                   work_dir: str) -> str:
    """What a failed checkpoint write tells the user: the file, the
    system's reason, the free space, and what is left intact."""
    try:
        free = f'{shutil.disk_usage(out_dir).free / 2**20:.0f} MiB free'
    except OSError:
        free = 'free space unknown'
    newest = newest_intact_checkpoint(work_dir)
    kept = (f'the older checkpoints are intact (newest: {newest})'
            if newest else 'no earlier checkpoint exists')
    return (f'cannot write the checkpoint {osp.join(out_dir, filename)}: '
            f'{error.strerror or error} ({free} in {out_dir}). Nothing '
            f'was written under that name and {kept}. Free some space or '
            'fix the folder, then continue with --resume.')


@master_only
def remove_partial_files(work_dir: str, logger: Logger) -> None:
    """Remove (and log) the temporary files of interrupted checkpoint
    writes in ``work_dir``."""
    for path in partial_files(work_dir):
        os.remove(path)
        logger.info(f'removed {path}, a checkpoint whose writing '
                    'was interrupted')
