from math import cos, pi
from typing import Optional

import torch
import torch.nn as nn
from mmengine.logging import MessageHub
from mmpretrain.models.utils import CosineEMA
from mmpretrain.registry import MODELS


@MODELS.register_module()
class MomentumTarget(CosineEMA):
    """Momentum (EMA) copy of the online branch, with a cosine schedule.

    Same convention as mmpretrain's ``CosineEMA``: ``target = (1 - m) *
    target + m * online`` with ``m`` going from ``momentum`` to
    ``end_momentum`` on a cosine over the training iterations (0.005 -> 0 is
    the authors' 0.995 -> 1). Two differences:

    * the first update averages like every other one. mmengine's EMA copies
      the online weights on its first update, which would throw away a
      target loaded from a checkpoint; here the copy is explicit
      (:meth:`copy_from`, called after weight initialisation);
    * the update is one fused ``torch._foreach_lerp_`` over all tensors, and
      the schedule position comes from the message hub's ``iter`` (a Python
      int), so updating needs no host-device synchronisation.

    Args:
        model (nn.Module): Online module to average.
        momentum (float): Start momentum. Defaults to 0.005.
        end_momentum (float): End momentum. Defaults to 0.
    """

    def __init__(self,
                 model: nn.Module,
                 momentum: float = 0.005,
                 end_momentum: float = 0.) -> None:
        super().__init__(model, momentum=momentum, end_momentum=end_momentum)
        self._targets = list(self.module.parameters())

    def current_momentum(self) -> float:
        """Momentum for this iteration (constant without a known schedule)."""
        hub = MessageHub.get_current_instance()
        max_iters = hub.get_info('max_iters')
        if not max_iters:
            return self.momentum
        step = hub.get_info('iter')
        step = int(self.steps) if step is None else step
        # never past the schedule's end (the cosine would rise again)
        step = min(max(step, 0), max_iters)
        annealing = (cos(pi * step / float(max_iters)) + 1) / 2
        return self.end_momentum - (self.end_momentum -
                                    self.momentum) * annealing

    @torch.no_grad()
    def update_parameters(self,
                          model: nn.Module,
                          momentum: Optional[float] = None) -> None:
        momentum = self.current_momentum() if momentum is None else momentum
        sources = [p.detach() for p in model.parameters()]
        if len(sources) != len(self._targets):
            raise ValueError('the online model does not match the target: '
                             f'{len(sources)} vs {len(self._targets)} tensors')
        torch._foreach_lerp_(self._targets, sources, momentum)
        self.steps += 1

    @torch.no_grad()
    def copy_from(self, model: nn.Module) -> None:
        """Make the target an exact copy of ``model`` (parameters and
        buffers)."""
        self.module.load_state_dict(model.state_dict())
