"""The checkpoint a run starts from: the one ``--resume`` (without a path)
continues from, and a checkpoint that cannot be read named with what is
wrong with the file and the newest intact checkpoint beside it.

mmengine's ``--resume`` takes whatever ``last_checkpoint`` names, or trains
from the start when that file is missing, and a damaged checkpoint fails
with torch's unpickling error. Here a work dir holding checkpoints but no
``last_checkpoint`` (or an empty one) is refused, naming the checkpoint to
resume; a work dir that was moved resumes from the checkpoint of the same
name in its new place; a damaged file (``--resume PATH``, ``load_from`` or
the one ``last_checkpoint`` names) is refused, naming the damage
(:func:`~mmsiameseim.engine.checkpoint_files.checkpoint_damage`).
"""
import os.path as osp
from logging import Logger
from typing import Optional

from mmengine.runner.checkpoint import _load_checkpoint

from ..checkpoint_files import (LAST_CHECKPOINT, checkpoint_damage,
                                checkpoint_files, checkpoint_names,
                                newest_intact_checkpoint, read_last_checkpoint)
from .refused_run import RunRefused


def _newest_hint(work_dir: str) -> str:
    newest = newest_intact_checkpoint(work_dir)
    return newest or f'(none: no intact checkpoint in {work_dir})'


def auto_resume_path(work_dir: str, logger: Logger) -> Optional[str]:
    """The checkpoint ``--resume`` (without a path) continues from in
    ``work_dir``, None when it holds none yet (training starts)."""
    last = read_last_checkpoint(work_dir)
    found = checkpoint_files(work_dir)
    pointer = osp.join(work_dir, LAST_CHECKPOINT)
    if last is None:
        if found:
            raise RunRefused(
                f'--resume: {work_dir} has no {LAST_CHECKPOINT} '
                f'file but holds checkpoints ({checkpoint_names(found)}); '
                f'name the one to resume: --resume {_newest_hint(work_dir)}')
        logger.info(f'--resume: no checkpoint in {work_dir} '
                    'yet; training from the start')
        return None
    if not last:
        raise RunRefused(
            f'--resume: {pointer} is empty and names no checkpoint. '
            f'The newest intact checkpoint of the work dir is '
            f'{_newest_hint(work_dir)}: resume from it with --resume PATH')
    if not osp.isfile(last):
        moved = osp.join(work_dir, osp.basename(last))
        if osp.isfile(moved):
            logger.info(f'{pointer} names {last}, which is not '
                        f'there; resuming from {moved} (the work '
                        'dir was moved)')
            return moved
    logger.info(f'resuming from {last} (named by {pointer})')
    return last


def read_checkpoint(filename: str, map_location, work_dir: str,
                    resuming: bool) -> dict:
    """mmengine's ``_load_checkpoint``; a local file that cannot be read is
    refused, naming its damage and the newest intact checkpoint beside it.

    Args:
        filename (str): The checkpoint (a path or a URL).
        map_location: As mmengine's ``Runner.load_checkpoint`` takes it.
        work_dir (str): The run's work dir (whose ``last_checkpoint`` may
            name ``filename``).
        resuming (bool): Whether the file is read to resume (the hint is
            then ``--resume``, else ``load_from``).
    """
    try:
        return _load_checkpoint(filename, map_location=map_location)
    except Exception as error:
        if '://' in filename:
            raise
        damage = checkpoint_damage(filename)
        if damage is None:
            raise RuntimeError(
                f'cannot load the checkpoint {filename}: {error}') from error
        folder = osp.dirname(osp.abspath(filename))
        newest = newest_intact_checkpoint(folder, exclude=filename)
        use = (f'--resume {newest}'
               if resuming else f'--cfg-options load_from={newest}')
        hint = (f'The newest intact checkpoint beside it is {newest}: '
                f'use it with {use}' if newest else
                f'No intact checkpoint is beside it in {folder}.')
        named_by = ''
        if osp.abspath(read_last_checkpoint(work_dir) or '') == \
                osp.abspath(filename):
            named_by = f' (named by {osp.join(work_dir, LAST_CHECKPOINT)})'
        raise RunRefused(f'cannot read the checkpoint {filename}{named_by}: '
                         f'{damage}. {hint}') from error
