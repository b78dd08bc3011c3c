"""Activation checkpointing of Transformer blocks.

A part that supports it (``SiameseIMViT``, ``RelPosDecoderNeck``) runs its
blocks through :func:`run_blocks`: with its ``with_cp`` set, in training
and when the tokens need a gradient, each block's activations are
recomputed in backward instead of kept (``torch.utils.checkpoint``,
non-reentrant, random state preserved so drop path draws the same). The
gradients are those of the plain run; the target branch (no gradient) is
never checkpointed. A BatchNorm inside a checkpointed block updates its
running statistics twice per step (they are not used in training).
"""
from typing import Iterable

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def run_blocks(blocks: Iterable[nn.Module], x: torch.Tensor,
               with_cp: bool) -> torch.Tensor:
    """``x`` through ``blocks`` in turn, checkpointed when ``with_cp`` and
    a gradient is being built."""
    for block in blocks:
        if with_cp and torch.is_grad_enabled() and x.requires_grad:
            x = checkpoint(block, x, use_reentrant=False)
        else:
            x = block(x)
    return x


def set_activation_checkpointing(part: nn.Module) -> None:
    """Turn activation checkpointing on in ``part``; refuses a part that
    does not support it, naming it."""
    if not hasattr(part, 'with_cp'):
        raise TypeError(
            f'activation_checkpointing: {type(part).__name__} does not '
            'support it (no with_cp attribute); SiameseIMViT and '
            'RelPosDecoderNeck do')
    part.with_cp = True
