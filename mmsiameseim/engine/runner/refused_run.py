"""A run refused before its first step: the error (:class:`RunRefused`),
no silent overwrite (:func:`refuse_overwrite`) and nothing written by a
refused run.

No silent overwrite: training that does not resume is refused when the
work dir holds checkpoints, naming them, unless the config says
``overwrite = True`` (testing or validating in such a work dir is not).

Nothing written by a refused run: the config dump waits until the checks
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

from ...docs_page import docs_page
from ..checkpoint_files import (LAST_CHECKPOINT, checkpoint_files,
                                checkpoint_names, read_last_checkpoint)

#: the page a refusal about resuming or overwriting points the user at
RESUME_DOCS = docs_page('pretraining/resume_and_preemption.md')


class RunRefused(RuntimeError):
    """A run or resume that would lose or mix up the user's training state,
    refused before its first step (the work dir is left as it was)."""


def refuse_overwrite(work_dir: str, overwrite: bool) -> None:
    """Refuse to train from the start into ``work_dir`` when it holds the
    checkpoints (or the ``last_checkpoint`` file) of an earlier run.

    Args:
        work_dir (str): The run's work dir.
        overwrite (bool): The config's ``overwrite``: start over anyway.
    """
    if overwrite:
        return
    found = checkpoint_files(work_dir)
    if not found and not osp.exists(osp.join(work_dir, LAST_CHECKPOINT)):
        return
    last = read_last_checkpoint(work_dir) or '(none)'
    raise RunRefused(
        f'{work_dir} holds the checkpoints of an earlier run '
        f'({checkpoint_names(found) or "none"}; {LAST_CHECKPOINT}: {last}); '
        'training from the start here would replace them. Continue '
        'that run with --resume, train into another --work-dir, or '
        'start over in this one with --cfg-options overwrite=True '
        f'(checkpoints of the same name are then replaced; {RESUME_DOCS}).')


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
