import logging
from typing import List

from mmengine.logging import print_log

#: Damaged files named in the stopping error (all are in the log).
SHOWN = 50


class TooManyDamagedImagesError(RuntimeError):
    """More images could not be read than the damaged-file policy allows; the
    message names them."""


class DamagedImagePolicy:
    """Skip unreadable images, name each in the log, count them, and stop when
    too many are damaged.

    Each read is recorded (:meth:`ok` or :meth:`damaged`). A damaged image
    is logged as a warning naming the file, the reason and the running
    count. Once more than ``max_damaged_fraction`` of the reads so far were
    damaged, and at least ``min_damaged`` of them, a
    :class:`TooManyDamagedImagesError` names every damaged file. The counts
    are kept per process (each dataloader worker holds its own).

    Args:
        source (str): What the images are (a folder), named in messages.
        max_damaged_fraction (float): The damaged share that stops the run,
            in [0, 1]. Defaults to 0.01.
        min_damaged (int): Never stop before this many damaged reads (a few
            bad files early in a run are not yet a fraction). 1 with
            ``max_damaged_fraction=0`` stops at the first damaged image.
            Defaults to 10.
        option_prefix (str): Where the options live in a config, for the
            messages. Defaults to 'train_dataloader.dataset.'.
    """

    def __init__(self,
                 source: str,
                 max_damaged_fraction: float = 0.01,
                 min_damaged: int = 10,
                 option_prefix: str = 'train_dataloader.dataset.') -> None:
        if not 0. <= max_damaged_fraction <= 1.:
            raise ValueError(f'max_damaged_fraction must be in [0, 1], got '
                             f'{max_damaged_fraction!r}')
        if int(min_damaged) != min_damaged or min_damaged < 1:
            raise ValueError(f'min_damaged must be an integer >= 1, got '
                             f'{min_damaged!r}')
        self.source = source
        self.max_damaged_fraction = max_damaged_fraction
        self.min_damaged = int(min_damaged)
        self.option_prefix = option_prefix
        self.reads = 0
        self.damaged_files: List[str] = []  # '<path>: <reason>'

    @property
    def num_damaged(self) -> int:
        return len(self.damaged_files)

    def ok(self) -> None:
        """Record a good read."""
        self.reads += 1

    def damaged(self, path: str, reason: str) -> None:
        """Record a damaged read: log it, and raise
        :class:`TooManyDamagedImagesError` when the policy says stop."""
        self.reads += 1
        message = reason if path in reason else f'{path}: {reason}'
        self.damaged_files.append(message)
        print_log(
            f'skipped a damaged image: {message} ({self.num_damaged} of '
            f'{self.reads} images read so far from {self.source} by this '
            'process were damaged)',
            logger='current',
            level=logging.WARNING)
        if self.should_stop():
            raise TooManyDamagedImagesError(self.stop_message())

    def should_stop(self) -> bool:
        return (self.num_damaged >= self.min_damaged
                and self.num_damaged > self.max_damaged_fraction * self.reads)

    def stop_message(self, why: str = '') -> str:
        """The stopping error's text: ``why``, or the policy's numbers, then
        the damaged files."""
        p = self.option_prefix
        unique = list(dict.fromkeys(self.damaged_files))
        names = '\n'.join(f'  {m}' for m in unique[:SHOWN])
        if len(unique) > SHOWN:
            names += (f'\n  ... and {len(unique) - SHOWN} more (each named '
                      'in the log above)')
        why = why or (f'more than max_damaged_fraction='
                      f'{self.max_damaged_fraction} of them (and at least '
                      f'min_damaged={self.min_damaged})')
        return (f'{self.num_damaged} of the {self.reads} images read from '
                f'{self.source} could not be read: {why}. Fix or remove these '
                f'files, or change the policy with --cfg-options '
                f'{p}max_damaged_fraction=F {p}min_damaged=N:\n{names}')
