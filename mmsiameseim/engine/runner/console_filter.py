"""What the training console leaves to the log file: the Runner's config,
environment and hook table dumps (hundreds of lines before the first
iteration), per-parameter lines that a person does not read, mmengine's
own deprecation notes, and a message repeated word for word (each
checkpoint hook announces the same folder). The run's log file keeps every
record; the config is also written into the work dir."""
import logging

#: (a text the message contains, what it is): file only
FILE_ONLY = (
    ('Config:\n', "the Runner's whole config (also written into the work "
     'dir)'),
    ('System environment:', 'the environment dump (Python, PyTorch build '
     'flags, ...)'),
    ('Hooks will be executed in the following order', 'the hook table'),
    ('paramwise_options -- ', 'one line per parameter with paramwise '
     'settings (optimizer constructor)'),
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


def filter_console(logger: logging.Logger) -> None:
    """Add :class:`ConsoleFilter` to ``logger``'s console handlers (not
    to its file handlers)."""
    for handler in logger.handlers:
        if type(handler) is logging.StreamHandler and not any(
                isinstance(f, ConsoleFilter) for f in handler.filters):
            handler.addFilter(ConsoleFilter())
