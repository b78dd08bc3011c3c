from typing import List, Optional, Union

import torch.nn as nn
from mmengine.logging import print_log
from mmengine.optim import DefaultOptimWrapperConstructor, OptimWrapper
from mmpretrain.registry import OPTIM_WRAPPER_CONSTRUCTORS


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class SkipFrozenOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """mmengine's default constructor that leaves out frozen submodules in
    one log line instead of a warning per parameter.

    With a ``paramwise_cfg`` mmengine's constructor already leaves every
    ``requires_grad=False`` parameter out of the optimizer, but warns once
    per parameter: for SiameseIM, a line for each tensor of the momentum
    target. Here a submodule whose parameters are all frozen (the momentum
    target, a frozen patch embedding) is not entered; the log names each
    one with its parameter count. The parameter groups are exactly
    mmengine's. A frozen parameter held directly by a module with trainable
    ones (e.g. a fixed position embedding) keeps mmengine's warning.

    Args:
        optim_wrapper_cfg (dict): As mmengine's.
        paramwise_cfg (dict, optional): As mmengine's. Defaults to None.
    """

    def __init__(self,
                 optim_wrapper_cfg: dict,
                 paramwise_cfg: Optional[dict] = None) -> None:
        super().__init__(optim_wrapper_cfg, paramwise_cfg)
        self.frozen: List[str] = []

    def add_params(self,
                   params: List[dict],
                   module: nn.Module,
                   prefix: str = '',
                   is_dcn_module: Optional[Union[int, float]] = None) -> None:
        tensors = list(module.parameters())
        if prefix and tensors and not any(p.requires_grad for p in tensors):
            self.frozen.append(f'{prefix} ({len(tensors)} tensors)')
            return
        super().add_params(params, module, prefix, is_dcn_module)

    def __call__(self, model: nn.Module) -> OptimWrapper:
        self.frozen = []
        wrapper = super().__call__(model)
        if self.frozen:
            print_log(
                'left out of the optimizer, frozen (requires_grad=False): ' +
                ', '.join(self.frozen),
                logger='current')
        return wrapper
