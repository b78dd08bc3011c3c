"""Where each patch of view b lies in view a's patch grid (paper Eq. 2-3).

Crop boxes are (top, left, height, width) in the original, unflipped image.
A flipped view's horizontal offset is measured in its own (mirrored) frame,
``W - left - width``, as the authors do.
"""
from typing import NamedTuple, Sequence, Tuple, Union

import torch

from .sincos_pos_embed import sincos_frequencies

GridSize = Union[int, Sequence[int]]


def _pair(size: GridSize) -> Tuple[int, int]:
    return (size, size) if isinstance(size, int) else tuple(size)


class CropPairOffsets(NamedTuple):
    """Where view b's crop lies relative to view a's, per sample: the six
    numbers the authors' data pipeline derives from a crop pair (in their
    order), each a (B,) tensor.

    Attributes:
        delta_i (Tensor): (top_b - top_a) / h_a.
        delta_j (Tensor): (left_b - left_a) / w_a, each left in its view's
            own (mirrored, when flipped) frame.
        delta_h (Tensor): h_b / h_a.
        delta_w (Tensor): w_b / w_a.
        relative_flip (Tensor): bool, exactly one of the two views flipped.
        flip_delta_j (Tensor): (W - left_a - left_b) / w_a, the horizontal
            offset used when the pair is mirrored.
    """
    delta_i: torch.Tensor
    delta_j: torch.Tensor
    delta_h: torch.Tensor
    delta_w: torch.Tensor
    relative_flip: torch.Tensor
    flip_delta_j: torch.Tensor

    def to(self, device: Union[str, torch.device]) -> 'CropPairOffsets':
        """The same offsets on ``device``."""
        return CropPairOffsets(*(t.to(device) for t in self))


def crop_pair_offsets(crop_boxes: torch.Tensor, flips: torch.Tensor,
                      img_widths: torch.Tensor) -> CropPairOffsets:
    """The offsets of view b relative to view a, from the crop pair.

    Args:
        crop_boxes (Tensor): (B, 2, 4) boxes of view a and view b.
        flips (Tensor): (B, 2) bool, whether each view was flipped.
        img_widths (Tensor): (B,) width W of each source image (the image
            the crops were taken from: ``crop_source_shape[1]``).

    Returns:
        CropPairOffsets: offsets and scales of view b in units of view a's
        size, and the flip terms.
    """
    boxes = crop_boxes.float()
    flips = flips.bool()
    top, left, h, w = boxes.unbind(-1)  # each (B, 2)
    W = img_widths.to(boxes).unsqueeze(-1)
    left = torch.where(flips, W - left - w, left)  # each view's own frame
    return CropPairOffsets(
        delta_i=(top[:, 1] - top[:, 0]) / h[:, 0],
        delta_j=(left[:, 1] - left[:, 0]) / w[:, 0],
        delta_h=h[:, 1] / h[:, 0],
        delta_w=w[:, 1] / w[:, 0],
        relative_flip=flips[:, 0] ^ flips[:, 1],
        flip_delta_j=(W[:, 0] - left[:, 0] - left[:, 1]) / w[:, 0])


def relative_patch_centres(offsets: CropPairOffsets,
                           grid_size: GridSize,
                           target_grid_size: GridSize = None
                           ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Centres of view b's patches in view a's patch coordinates.

    Args:
        offsets (CropPairOffsets): Output of :func:`crop_pair_offsets`.
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
        out_h.sin(), out_h.cos(), out_w.sin(), out_w.cos(),
        scale_h.sin(), scale_h.cos(), scale_w.sin(), scale_w.cos()
    ], dim=-1)
