"""No silent overwrite: training that does not resume is refused when the
work dir holds checkpoints, naming them, unless the config says
``overwrite = True`` (testing or validating in such a work dir is not)."""
import os.path as osp

from ..checkpoint_files import (LAST_CHECKPOINT, checkpoint_files,
                                checkpoint_names, read_last_checkpoint)
from .run_refused import RESUME_DOCS, RunRefused


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
