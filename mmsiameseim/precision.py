"""One precision vocabulary and one route to float32.

The vocabulary is mmengine's (``AmpOptimWrapper(dtype=...)``): the torch
dtype names ``'float32'``, ``'bfloat16'`` and ``'float16'``. Configs, the
evaluation (``OnlineKNNHook(precision=...)``, the studies'
``FrozenBackboneProtocol``) and ``AutocastOptimWrapper(dtype=...)``
take these names; the tools' short flags (``--precision fp32,bf16``,
``--fp32``) become them through :func:`precision_from_flag` only.

The route to float32 is no autocast context at all (:func:`autocast`
returns a null context; not an autocast asked for float32, which warns on
CPU and disables itself), and, for training, mmengine's plain
``OptimWrapper`` (:func:`set_training_precision`); ``AutocastOptimWrapper``
refuses ``dtype='float32'`` and points there.
"""
import contextlib
from typing import ContextManager, Dict, Mapping

import torch
from mmengine.config import Config

# precision name -> autocast dtype (None: plain float32, no autocast at all)
PRECISIONS = {
    'float32': None,
    'bfloat16': torch.bfloat16,
    'float16': torch.float16
}
# the tools' short --precision flags -> precision names
FLAGS = {'fp32': 'float32', 'bf16': 'bfloat16', 'fp16': 'float16'}
# optimizer wrappers set_training_precision switches between (mmengine's
# AmpOptimWrapper only away from: its loss scaling is dropped)
TRAINING_WRAPPERS = ('OptimWrapper', 'AutocastOptimWrapper', 'AmpOptimWrapper')


def check_precision(precision: str, option: str = 'precision') -> None:
    """Raise a clear error for an unknown precision name.

    Args:
        precision (str): The name to check.
        option (str): The argument or config key that gave it, for the
            message. Defaults to 'precision'.
    """
    if precision in PRECISIONS:
        return
    hint = (f" ({precision!r} is a tools' --precision flag; configs and "
            f'the Python API take {FLAGS[precision]!r})'
            if precision in FLAGS else '')
    raise ValueError(f'{option}={precision!r}: choose from '
                     f'{list(PRECISIONS)}{hint}')


def precision_from_flag(flag: str) -> str:
    """The precision name of a tool's short flag: 'fp32' -> 'float32', 'bf16'
    -> 'bfloat16', 'fp16' -> 'float16'.

    Raises:
        ValueError: Not one of the flags (the message lists them).
    """
    if flag not in FLAGS:
        raise ValueError(f'unknown {flag!r} ({", ".join(FLAGS)})')
    return FLAGS[flag]


def autocast(device_type: str, precision: str = 'float32') -> ContextManager:
    """``torch.autocast`` for 'bfloat16' / 'float16'; for 'float32' no autocast
    context at all.

    Args:
        device_type (str): 'cpu' or 'cuda'.
        precision (str): 'float32', 'bfloat16' or 'float16'. Defaults to
            'float32'.
    """
    check_precision(precision)
    dtype = PRECISIONS[precision]
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type, dtype=dtype)


def set_training_precision(cfg: Config, precision: str) -> None:
    """Make ``cfg.optim_wrapper`` train in ``precision``.

    'float32' gives mmengine's plain ``OptimWrapper`` (its optimizer,
    clipping and accumulation kept, no autocast); 'bfloat16' / 'float16'
    give ``AutocastOptimWrapper`` with that dtype. A CUDA-only
    ``AmpOptimWrapper`` loses its loss-scaling settings on the way.

    Args:
        cfg (Config): A training config with an ``optim_wrapper``.
        precision (str): 'float32', 'bfloat16' or 'float16'.
    """
    check_precision(precision)
    wrapper = dict(cfg.optim_wrapper)
    if wrapper.get('type', 'OptimWrapper') not in TRAINING_WRAPPERS:
        raise ValueError(f'optim_wrapper.type={wrapper["type"]!r}: only '
                         f'{", ".join(TRAINING_WRAPPERS)} can be switched '
                         f'to {precision}')
    for key in ('dtype', 'loss_scale', 'use_fsdp'):
        wrapper.pop(key, None)
    if PRECISIONS[precision] is None:
        wrapper['type'] = 'OptimWrapper'
    else:
        wrapper.update(type='AutocastOptimWrapper', dtype=precision)
    cfg.optim_wrapper = wrapper


def training_precision(optim_wrapper: Mapping) -> str:
    """The precision an ``optim_wrapper`` config trains in: 'float32' for
    mmengine's ``OptimWrapper``, else its autocast ``dtype`` (mmengine's
    ``AmpOptimWrapper`` defaults to 'float16')."""
    kind = optim_wrapper.get('type', 'OptimWrapper')
    if kind == 'OptimWrapper':
        return 'float32'
    return str(optim_wrapper.get('dtype') or 'float16')


def cpu_bf16_flags() -> Dict[str, bool]:
    """Which bf16 instruction sets the CPU's flags (/proc/cpuinfo) list.

    Returns ``{'avx512_bf16': bool, 'amx_bf16': bool}``, both False where the
    flags cannot be read.
    """
    try:
        with open('/proc/cpuinfo') as f:
            flags = set(
                next(line for line in f
                     if line.startswith('flags')).split(':')[1].split())
    except (OSError, StopIteration):
        flags = set()
    return {name: name in flags for name in ('avx512_bf16', 'amx_bf16')}


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX-512 BF16 or AMX), where
    bf16 autocast is faster than fp32 rather than emulated."""
    return any(cpu_bf16_flags().values())
