"""Nothing written by a refused run: the config dump waits until the checks
have passed (``FaultTolerantRunner.dump_config``), and a run refused before
its first step, or whose model, hook or dataset refuses its settings while
the runner builds it, removes the log folder it created (and the work dir,
when it created it and it is still empty), so the work dir is as it was.
"""
import os
import os.path as osp
import shutil
from typing import Optional

from mmengine.dist import master_only


def existing_work_dir(args: tuple, kwargs: dict) -> bool:
    """Whether the work dir named by mmengine's ``Runner`` arguments exists
    before the runner is made (``work_dir``: keyword or second argument)."""
    work_dir: Optional[str] = kwargs.get('work_dir',
                                         args[1] if len(args) > 1 else None)
    return work_dir is not None and osp.isdir(work_dir)


@master_only
def remove_own_files(runner) -> None:
    """Undo what ``runner`` wrote before it was refused: its log folder
    (unless ``runner._log_dir_existed``) and, when it created it
    (``runner._work_dir_existed`` is False) and it is empty, the work dir.

    The log file is closed first, and the runner's logger and visualizer are
    forgotten by mmengine.
    """
    logger = getattr(runner, 'logger', None)
    for handler in list(logger.handlers if logger else []):
        if hasattr(handler, 'baseFilename'):
            handler.close()
            logger.removeHandler(handler)
    if not runner._log_dir_existed and osp.isdir(runner._log_dir):
        shutil.rmtree(runner._log_dir, ignore_errors=True)
    if (not runner._work_dir_existed and osp.isdir(runner.work_dir)
            and not os.listdir(runner.work_dir)):
        os.rmdir(runner.work_dir)
    # mmengine names the logger and visualizer by the experiment (the
    # config's name and the second): a runner built in the same second
    # would be handed these, and write into the folder just removed
    for instance in (logger, getattr(runner, 'visualizer', None)):
        if instance is not None:
            named = type(instance)._instance_dict
            if named.get(instance.instance_name) is instance:
                del named[instance.instance_name]
