"""Where each patch of view b lies in view a's patch grid (paper Eq.

2-3),
and its sin-cos features p_b, from the crop-pair offsets of
:mod:`.batch_geometry`.
"""
from typing import Tuple

import torch

from .batch_geometry import CropPairOffsets, GridSize, _pair
from .sincos_pos_embed import sincos_frequencies


def relative_patch_centres(
        offsets: CropPairOffsets,
        grid_size: GridSize,
        target_grid_size: GridSize = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Centres of view b's patches in view a's patch coordinates.

    Args:
        offsets (CropPairOffsets): Output of
            :func:`~.batch_geometry.crop_pair_offsets`.
        grid_size (int | tuple): View a's patch grid (rows, cols).
        target_grid_size (int | tuple, optional): View b's patch grid when it
            differs from view a's (a lower-resolution target).

    Returns:
        tuple: rows and cols, each (B, rows_b * cols_b), in view a's grid
        units (patch (0, 0) of view a is centred at (0, 0)).
    """
    nh, nw = _pair(grid_size)
    th, tw = _pair(target_grid_size or grid_size)
    d = offsets
    device = d.delta_h.device
    u, v = torch.meshgrid(
        (torch.arange(th, dtype=torch.float32, device=device) + 0.5) * nh / th,
        (torch.arange(tw, dtype=torch.float32, device=device) + 0.5) * nw / tw,
        indexing='ij')
    u, v = u.reshape(1, -1), v.reshape(1, -1)
    rows = d.delta_h[:, None] * u + (d.delta_i * nh)[:, None]
    cols = d.delta_w[:, None] * v + (d.delta_j * nw)[:, None]
    mirrored = -d.delta_w[:, None] * v + (d.flip_delta_j * nw)[:, None]
    flip = d.relative_flip.float()[:, None]
    cols = flip * mirrored + (1 - flip) * cols
    return rows - 0.5, cols - 0.5


def relative_sincos_embed(offsets: CropPairOffsets,
                          grid_size: GridSize,
                          embed_dims: int,
                          target_grid_size: GridSize = None) -> torch.Tensor:
    """The relative position features p_b, shape (B, N_b, 2 * embed_dims).

    ``[sin, cos](rows), [sin, cos](cols), [sin, cos](10 log h2/h1),
    [sin, cos](10 log w2/w1)``, each with ``embed_dims / 4`` frequencies.
    """
    rows, cols = relative_patch_centres(offsets, grid_size, target_grid_size)
    omega = sincos_frequencies(embed_dims, rows.device)
    out_h = rows.unsqueeze(-1) * omega
    out_w = cols.unsqueeze(-1) * omega
    n = rows.shape[1]
    scale_h = (10 * torch.log(offsets.delta_h)[:, None] * omega)
    scale_w = (10 * torch.log(offsets.delta_w)[:, None] * omega)
    scale_h = scale_h.unsqueeze(1).expand(-1, n, -1)
    scale_w = scale_w.unsqueeze(1).expand(-1, n, -1)
    return torch.cat([
        out_h.sin(),
        out_h.cos(),
        out_w.sin(),
        out_w.cos(),
        scale_h.sin(),
        scale_h.cos(),
        scale_w.sin(),
        scale_w.cos()
    ],
                     dim=-1)
