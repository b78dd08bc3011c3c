"""What the training console leaves to the log file: the Runner's config,
environment and hook table dumps (hundreds of lines before the first
iteration), per-parameter lines that a person does not read, mmengine's
own deprecation notes, and a message repeated word for word (each
checkpoint hook announces the same folder). The run's log file keeps every
record; the config is also written into the work dir. A data loader's
``pin_memory`` is left off without a GPU, where torch ignores it with a
warning per loader (:func:`without_pin_memory_on_cpu`). A refusal prints
its message without a traceback (:func:`print_refusals_plainly`)."""
import logging
import sys
from typing import Any

import torch

#: (a text the message contains, what it is): file only
FILE_ONLY = (
    ('Config:\n', "the Runner's whole config (also written into the work "
     'dir)'),
    ('System environment:', 'the environment dump (Python, PyTorch build '
     'flags, ...)'),
    ('Hooks will be executed in the following order', 'the hook table'),
    ('paramwise_options -- ', 'one line per parameter with paramwise '
     'settings (optimizer constructor)'),
    ('is skipped since its requires_grad=False', 'a frozen parameter the '
     'optimizer leaves out, one line each'),
    ('"FileClient" will be deprecated', "mmengine's own deprecations"),
    ('"HardDiskBackend" is the alias of', "mmengine's own deprecations"),
)


class ConsoleFilter(logging.Filter):
    """Drops the records of :data:`FILE_ONLY` and a record whose message
    repeats the one before it."""

    def __init__(self) -> None:
        super().__init__()
        self._last = None

    def filter(self, record: logging.LogRecord) -> bool:
        msg = str(record.msg)
        if any(text in msg for text, _ in FILE_ONLY) or msg == self._last:
            return False
        self._last = msg
        return True


def filter_console(logger: logging.Logger) -> logging.Logger:
    """``logger`` with :class:`ConsoleFilter` added to its console handlers
    (not to its file handlers)."""
    for handler in logger.handlers:
        if type(handler) is logging.StreamHandler and not any(
                isinstance(f, ConsoleFilter) for f in handler.filters):
            handler.addFilter(ConsoleFilter())
    return logger


def print_refusals_plainly(*refusals: type) -> None:
    """Show an uncaught refusal (``refusals``: the exception classes whose
    message says everything: the key, the file, what to do) as its message
    alone, without the traceback above it, so that it is the last thing
    ``tools/train.py`` prints; other exceptions keep their traceback.
    Installed only over Python's own hook (not over IPython's, say)."""
    if sys.excepthook is not sys.__excepthook__:
        return
    previous = sys.excepthook

    def hook(kind, error, traceback):
        if issubclass(kind, refusals):
            print(f'{kind.__name__}: {error}', file=sys.stderr)
        else:
            previous(kind, error, traceback)

    sys.excepthook = hook


def without_pin_memory_on_cpu(dataloader: Any) -> Any:
    """A data loader config with ``pin_memory`` left off when no GPU is
    available (torch would ignore it with a warning)."""
    if isinstance(dataloader, dict) and dataloader.get('pin_memory') \
            and not torch.cuda.is_available():
        return dict(dataloader, pin_memory=False)
    return dataloader
