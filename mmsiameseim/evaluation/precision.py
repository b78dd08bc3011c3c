import contextlib
from typing import ContextManager

import torch
from mmengine.config import Config

# precision name -> autocast dtype (None: plain fp32, no autocast at all)
PRECISIONS = {'fp32': None, 'bf16': torch.bfloat16, 'fp16': torch.float16}


def check_precision(precision: str) -> None:
    """Raise a clear error for an unknown precision name."""
    if precision not in PRECISIONS:
        raise ValueError(f'precision={precision!r}: choose from '
                         f'{sorted(PRECISIONS)}')


def autocast(device_type: str, precision: str = 'fp32') -> ContextManager:
    """``torch.autocast`` for 'bf16' / 'fp16'; for 'fp32' no autocast
    context at all (not an autocast with an unsupported dtype).

    Args:
        device_type (str): 'cpu' or 'cuda'.
        precision (str): 'fp32', 'bf16' or 'fp16'. Defaults to 'fp32'.
    """
    check_precision(precision)
    dtype = PRECISIONS[precision]
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type, dtype=dtype)


def set_training_precision(cfg: Config, precision: str) -> None:
    """Make ``cfg.optim_wrapper`` train in ``precision``.

    'fp32' gives mmengine's plain ``OptimWrapper`` (its optimizer, clipping
    and accumulation kept, no autocast); 'bf16' / 'fp16' give
    ``AutocastOptimWrapper`` with that dtype.

    Args:
        cfg (Config): A training config with an ``optim_wrapper``.
        precision (str): 'fp32', 'bf16' or 'fp16'.
    """
    check_precision(precision)
    wrapper = dict(cfg.optim_wrapper)
    if wrapper.get('type', 'OptimWrapper') not in ('OptimWrapper',
                                                   'AutocastOptimWrapper'):
        raise ValueError(f'optim_wrapper.type={wrapper["type"]!r}: only '
                         'OptimWrapper and AutocastOptimWrapper can be '
                         f'switched to {precision}')
    wrapper.pop('dtype', None)
    if precision == 'fp32':
        wrapper['type'] = 'OptimWrapper'
    else:
        wrapper.update(type='AutocastOptimWrapper',
                       dtype=str(PRECISIONS[precision]).split('.')[-1])
    cfg.optim_wrapper = wrapper


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX-512 BF16 or AMX), where
    bf16 autocast is faster than fp32 rather than emulated."""
    try:
        with open('/proc/cpuinfo') as f:
            flags = f.read()
    except OSError:
        return False
    return 'avx512_bf16' in flags or 'amx_bf16' in flags
