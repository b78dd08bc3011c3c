from contextlib import contextmanager
from typing import Optional

import torch.nn as nn
from mmengine.optim import OptimWrapper
from mmpretrain.registry import OPTIM_WRAPPERS

from ...precision import autocast, check_precision


@OPTIM_WRAPPERS.register_module()
class AutocastOptimWrapper(OptimWrapper):
    """Optimizer wrapper that runs the forward under ``torch.autocast``.

    mmengine's ``AmpOptimWrapper`` requires CUDA; bfloat16 needs no loss
    scaling, so this wrapper gives bf16 mixed precision on CPUs with bf16
    instructions (AVX-512 BF16, AMX) as well as on GPUs. Components that
    must stay in fp32 (token BatchNorm, UniGrad loss) disable autocast
    themselves. The context is :func:`mmsiameseim.evaluation.autocast`, the
    one the evaluation and the benchmarks use.

    Args:
        dtype (str): Autocast dtype, named as mmengine's ``AmpOptimWrapper``
            names it: 'bfloat16' or 'float16' (CUDA; no loss scaling here,
            use mmengine's ``AmpOptimWrapper`` for that). float32 training
            is mmengine's plain ``OptimWrapper``
            (:func:`~mmsiameseim.evaluation.set_training_precision`), so
            'float32' is refused with that advice. Defaults to 'bfloat16'.
        device_type (str, optional): 'cpu' or 'cuda'; by default the device
            of the first parameter.
        **kwargs: ``OptimWrapper`` arguments.
    """

    def __init__(self,
                 dtype: str = 'bfloat16',
                 device_type: Optional[str] = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        check_precision(dtype, option='AutocastOptimWrapper dtype')
        if dtype == 'float32':
            raise ValueError(
                "AutocastOptimWrapper dtype='float32': float32 is no "
                "autocast; train it with mmengine's OptimWrapper "
                "(optim_wrapper=dict(type='OptimWrapper', ...) without "
                'dtype, mmsiameseim.evaluation.set_training_precision(cfg, '
                "'float32'), or the tools' --fp32)")
        self.dtype = dtype
        self.device_type = device_type

    @contextmanager
    def optim_context(self, model: nn.Module):
        device = self.device_type or next(model.parameters()).device.type
        with super().optim_context(model), autocast(device, self.dtype):
            yield
