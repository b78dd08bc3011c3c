"""What the demo prints: a short header per run instead of whole configs.

mmengine's Runner logs its whole config (``Config:`` and the pretty-printed
file, with the evaluation subsets' thousand-entry index lists) when it is
built. The demo keeps that out of the console: :func:`config_off_console`
drops that one message from the console handler of every ``MMLogger``
made while it is active; the run's log file still holds it, and the Runner
writes the config itself into its work dir (``Runner.dump_config``).
"""
import contextlib
import logging
import os.path as osp
from typing import Iterator

from mmengine.config import Config
from mmengine.logging import MMLogger

CONFIG_DUMP = 'Config:\n'


class DropConfigDump(logging.Filter):
    """Drops the Runner's ``Config:`` dump; lets every other record by."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(CONFIG_DUMP)


@contextlib.contextmanager
def config_off_console() -> Iterator[None]:
    """While active, the console handler of every ``MMLogger`` made (each
    Runner makes one) drops the Runner's ``Config:`` dump; file handlers keep
    it."""
    init = MMLogger.__init__

    def quiet_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for handler in self.handlers:
            if type(handler) is logging.StreamHandler:  # not FileHandler
                handler.addFilter(DropConfigDump())

    MMLogger.__init__ = quiet_init
    try:
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
