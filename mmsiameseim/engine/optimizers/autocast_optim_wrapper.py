import contextlib
from contextlib import contextmanager

import torch
import torch.nn as nn
from mmengine.optim import OptimWrapper
from mmpretrain.registry import OPTIM_WRAPPERS

_DTYPES = ('bfloat16', 'float16', 'float32')


@OPTIM_WRAPPERS.register_module()
class AutocastOptimWrapper(OptimWrapper):
    """Optimizer wrapper that runs the forward under ``torch.autocast``.

    mmengine's ``AmpOptimWrapper`` requires CUDA; bfloat16 needs no loss
    scaling, so this wrapper gives bf16 mixed precision on CPUs with bf16
    instructions (AVX-512 BF16, AMX) as well as on GPUs. Components that
    must stay in fp32 (token BatchNorm, UniGrad loss) disable autocast
    themselves.

    Args:
        dtype (str): Autocast dtype: 'bfloat16', 'float16' (CUDA; no loss
            scaling here, use mmengine's ``AmpOptimWrapper`` for that) or
            'float32', which means no autocast at all: plain fp32 (for
            CPUs without bf16 instructions). Defaults to 'bfloat16'.
        device_type (str, optional): 'cpu' or 'cuda'; by default the device
            of the first parameter.
        **kwargs: ``OptimWrapper`` arguments.
    """

    def __init__(self,
                 dtype: str = 'bfloat16',
                 device_type: str = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if dtype not in _DTYPES:
            raise ValueError(f'AutocastOptimWrapper: dtype must be one of '
                             f'{_DTYPES}, got {dtype!r}')
        self.cast_dtype = getattr(torch, dtype)
        self.device_type = device_type

    @contextmanager
    def optim_context(self, model: nn.Module):
        device = self.device_type or next(model.parameters()).device.type
        precision = contextlib.nullcontext() \
            if self.cast_dtype == torch.float32 else torch.autocast(
                device_type=device, dtype=self.cast_dtype)
        with super().optim_context(model), precision:
            yield
