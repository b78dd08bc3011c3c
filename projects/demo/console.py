"""What the demo prints: a short header per run, progress, the warnings
that ask the user to act and the results.

Each mmengine Runner logs, when it is built and started, its whole config,
the environment (Python, PyTorch build flags, ...), its hook table, where
checkpoints go, one line per parameter with a paramwise setting and one per
frozen parameter the optimizer leaves out (the momentum target's); the
linear probes build a Runner each. :func:`quiet_console` keeps these out of
the console: the console handler of every ``MMLogger`` made while it is
active drops them (:data:`FILE_ONLY`), the run's log file keeps every
record, and the Runner writes the config itself into its work dir
(``Runner.dump_config``). Python warnings that ask nothing of the user
(:data:`IGNORED_WARNINGS`) are not shown.
"""
import contextlib
import logging
import os.path as osp
import warnings
from typing import Iterator

from mmengine.config import Config
from mmengine.logging import MMLogger

#: log messages that go to the log file only: (a text the message
#: contains, what it is)
FILE_ONLY = (
    ('Config:\n', "the Runner's whole config"),
    ('System environment:', 'the environment dump (Runner)'),
    ('Hooks will be executed in the following order', 'the hook table'),
    ('Checkpoints will be saved to', 'each checkpoint hook, at its start'),
    ('Saving checkpoint at', 'each checkpoint written'),
    ('paramwise_options -- ', 'one line per parameter with paramwise '
     'settings (optimizer constructor)'),
    ('is skipped since its requires_grad=False', 'a frozen parameter held '
     'beside trainable ones (the fixed position embedding)'),
    ('left out of the optimizer, frozen', 'the frozen modules '
     '(SkipFrozenOptimWrapperConstructor: the momentum target, a frozen '
     'patch embedding)'),
    ('"FileClient" will be deprecated', "mmengine's own deprecations"),
    ('"HardDiskBackend" is the alias of', "mmengine's own deprecations"),
    ('Distributed training is not used, all SyncBatchNorm',
     "the Runner's note on a one-process run"),
    ('split="train" but test_mode=True', "mmpretrain's note on the training "
     'images the evaluation encodes'),
    ('Exp name: ', "the Runner's experiment name, every log interval"),
    (' ignored (not backbone.*)', 'the key report of each evaluation '
     'backbone load (its warnings stay on the console)'),
)
#: Python warnings (message regex) not shown: raised inside dependencies,
#: nothing for the user to do
IGNORED_WARNINGS = (
    r'pkg_resources is deprecated as an API',
    r'The given NumPy array is not writable',
)


class FileOnlyFilter(logging.Filter):
    """Drops the records of :data:`FILE_ONLY`; lets every other record
    by."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = str(record.msg)
        return not any(text in msg for text, _ in FILE_ONLY)


@contextlib.contextmanager
def quiet_console() -> Iterator[None]:
    """While active, the console handler of every ``MMLogger`` made (each
    Runner makes one) drops the records of :data:`FILE_ONLY` (file handlers
    keep them), and the warnings of :data:`IGNORED_WARNINGS` are not
    shown."""
    init = MMLogger.__init__

    def quiet_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for handler in self.handlers:
            if type(handler) is logging.StreamHandler:  # not FileHandler
                handler.addFilter(FileOnlyFilter())

    MMLogger.__init__ = quiet_init
    try:
        with warnings.catch_warnings():
            for message in IGNORED_WARNINGS:
                warnings.filterwarnings('ignore', message=message)
            yield
    finally:
        MMLogger.__init__ = init


def count_parameters(model) -> str:
    """'1.23 M parameters (backbone 0.80 M)' of a built model."""
    total = sum(p.numel() for p in model.parameters())
    text = f'{total / 1e6:.2f} M parameters'
    backbone = getattr(model, 'backbone', None)
    if backbone is not None:
        text += f' (backbone ' \
            f'{sum(p.numel() for p in backbone.parameters()) / 1e6:.2f} M)'
    return text


def run_header(cfg: Config, model, images: int) -> str:
    """Four lines on a pretraining run: its config (and where the full one
    is kept), data, model size and output folder."""
    dataset = cfg.train_dataloader.dataset
    root = dataset.get('data_root') or dataset.get('data_prefix')
    name = osp.basename(cfg.filename) if cfg.filename else 'config.py'
    source = osp.relpath(cfg.filename) if cfg.filename else '(built in code)'
    return '\n'.join([
        f'  config: {source} (in full: {osp.join(cfg.work_dir, name)})',
        f'  data:   {images} images of {dataset.type} from '
        f'{osp.normpath(root) if isinstance(root, str) else root}',
        f'  model:  {cfg.model.type}, {count_parameters(model)}; '
        f'{cfg.train_cfg.max_epochs} epoch(s) at batch '
        f'{cfg.train_dataloader.batch_size}',
        f'  output: {cfg.work_dir}',
    ])
