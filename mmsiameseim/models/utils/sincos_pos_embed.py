"""Fixed 2-D sine-cosine position embeddings in the SiameseIM layout.

Rows come first: ``[sin(row), cos(row), sin(col), cos(col)]``, each block with
``D/4`` frequencies ``1 / 10000^(k / (D/4))``. (mmpretrain's
``build_2d_sincos_position_embedding`` puts columns first, so released
SiameseIM weights would see transposed positions with it.)
"""
from typing import Sequence, Union

import torch

TEMPERATURE = 10000.


def sincos_frequencies(embed_dims: int,
                       device: torch.device = None) -> torch.Tensor:
    """The ``embed_dims // 4`` frequencies shared by every coordinate."""
    if embed_dims % 4 != 0:
        raise ValueError(
            f'embed_dims must be divisible by 4, got {embed_dims}')
    num = embed_dims // 4
    exponent = torch.arange(num, dtype=torch.float32, device=device) / num
    return 1. / (TEMPERATURE**exponent)


def build_rows_first_sincos_embed(grid_size: Union[int, Sequence[int]],
                                  embed_dims: int,
                                  cls_token: bool = True) -> torch.Tensor:
    """Absolute embedding of a patch grid, shape (1, [1 +] H*W, D).

    The cls position (when requested) is all zeros.
    """
    h, w = (grid_size, grid_size) if isinstance(grid_size, int) else grid_size
    rows, cols = torch.meshgrid(
        torch.arange(h, dtype=torch.float64),
        torch.arange(w, dtype=torch.float64),
        indexing='ij')
    omega = sincos_frequencies(embed_dims).double()
    out_h = rows.reshape(-1, 1) * omega
    out_w = cols.reshape(-1, 1) * omega
    embed = torch.cat(
        [out_h.sin(), out_h.cos(),
         out_w.sin(), out_w.cos()], dim=1)
    if cls_token:
        embed = torch.cat([embed.new_zeros(1, embed_dims), embed], dim=0)
    return embed.float().unsqueeze(0)
