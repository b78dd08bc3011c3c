import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.models.utils.attention import MultiheadAttention


def fp32_attention_under_cpu_autocast(query: torch.Tensor, key: torch.Tensor,
                                      value: torch.Tensor, *args,
                                      **kwargs) -> torch.Tensor:
    """``F.scaled_dot_product_attention`` that runs in fp32 under CPU
    autocast and returns the autocast dtype; unchanged elsewhere.

    On CPUs torch's bf16 attention kernels are slower than its fp32 fused
    kernel over a SiameseIM step's attention calls: the fused bf16 kernel
    is slow on short sequences, the matmul-softmax path on long ones
    (``tools/benchmark_attention.py`` prints the table). Only the attention
    core runs in fp32; the projections around it stay in bf16.
    """
    if query.device.type != 'cpu' or not torch.is_autocast_enabled('cpu'):
        return F.scaled_dot_product_attention(query, key, value, *args,
                                              **kwargs)
    with torch.autocast('cpu', enabled=False):
        out = F.scaled_dot_product_attention(query.float(), key.float(),
                                             value.float(), *args, **kwargs)
    return out.to(torch.get_autocast_dtype('cpu'))


def use_fp32_attention_under_cpu_autocast(module: nn.Module) -> nn.Module:
    """Route every mmpretrain ``MultiheadAttention`` in ``module`` through
    :func:`fp32_attention_under_cpu_autocast`.

    Returns ``module``.
    """
    for m in module.modules():
        if isinstance(m, MultiheadAttention):
            m.scaled_dot_product_attention = fp32_attention_under_cpu_autocast
    return module
