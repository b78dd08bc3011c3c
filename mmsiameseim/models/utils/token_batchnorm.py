import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS
from torch.distributed.nn.functional import all_reduce


def _world_size() -> int:
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


@MODELS.register_module(name=['TokenBN', 'TokenBatchNorm'])
class TokenBatchNorm(nn.BatchNorm1d):
    """BatchNorm over all tokens of a batch, in fp32, synced across ranks.

    Normalises (..., C) token features with statistics taken over every
    leading dimension (batch and tokens together), as the authors' projector
    and predictor do. It always runs in fp32 with autocast off.

    When ``torch.distributed`` is initialised with more than one rank, the
    statistics are all-reduced in training mode on any backend (gloo
    included; ``torch.nn.SyncBatchNorm`` refuses CPU tensors). The all-reduce
    is autograd-aware, so gradients flow to every rank's inputs exactly as
    for one process on the whole batch.

    Args:
        num_features (int): Channels C.
        eps (float): Added to the variance. Defaults to 1e-5.
        momentum (float): Running-statistics momentum. Defaults to 0.1.
        sync (bool): Synchronise statistics across ranks when distributed.
            Defaults to True.
    """

    def __init__(self,
                 num_features: int,
                 eps: float = 1e-5,
                 momentum: float = 0.1,
                 sync: bool = True) -> None:
        super().__init__(num_features, eps=eps, momentum=momentum)
        self.sync = sync

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        with torch.autocast(device_type=x.device.type, enabled=False):
            flat = x.reshape(-1, shape[-1]).float()
            if self.training and self.sync and _world_size() > 1:
                out = self._synced_batch_norm(flat)
            else:
                out = F.batch_norm(flat, self.running_mean, self.running_var,
                                   self.weight, self.bias, self.training,
                                   self.momentum, self.eps)
        return out.reshape(shape)

    def _synced_batch_norm(self, x: torch.Tensor) -> torch.Tensor:
        count = x.new_tensor([x.shape[0]])
        total = all_reduce(torch.cat([x.sum(0), count]))
        n = total[-1]
        mean = total[:-1] / n
        centered = x - mean
        var = all_reduce(centered.pow(2).sum(0)) / n
        with torch.no_grad():
            self.num_batches_tracked.add_(1)
            unbiased = var * (n / (n - 1).clamp(min=1))
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(unbiased, self.momentum)
        return centered * torch.rsqrt(var + self.eps) * self.weight + self.bias
