"""SiameseIM's geometry, in one place: the batch geometry and its checks,
where view b's patches lie in view a's grid, and the sin-cos embeddings.

**The geometry contract** between the two-view pipeline and the model:

- ``TwoViewRandomResizedCrop`` writes, per sample, ``crop_boxes`` (2, 4) =
  (top, left, height, width) of view a and view b in the unflipped image it
  received, ``flips`` (2,) and ``crop_source_shape`` (H, W) of that image;
  ``PackInputs(algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'])``
  carries them to the model, which turns them into :class:`CropPairOffsets`
  (:func:`crop_pair_offsets`), the input of the relative position embedding
  (:func:`relative_sincos_embed`, paper Eq. 2-3);
- the crop's ``size`` (view a), its ``target_size`` (view b), the mask
  generator's ``input_size`` and the neck's ``grid_size`` /
  ``target_grid_size`` are one patch grid at the backbone's patch size
  (``patch_grid`` in the configs): a :class:`PatchGrid`.

:func:`batch_geometry` reads a batch's geometry in one walk of its data
samples and checks it whatever loop trains the model (``SiameseIM.loss``
calls it before the first forward of every step; the checks are shape
comparisons); :func:`~.pipeline_check.check_patch_grid` checks a
pipeline's built transforms without data, at build time. Every error names
the key or option at fault.

**Sin-cos embeddings** in the SiameseIM layout: rows come first,
``[sin(row), cos(row), sin(col), cos(col)]``, each block with ``D/4``
frequencies ``1 / 10000^(k / (D/4))``. (mmpretrain's
``build_2d_sincos_position_embedding`` puts columns first, so released
SiameseIM weights would see transposed positions with it.)
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from mmengine.utils import to_2tuple
from mmpretrain.structures import DataSample

from ...docs_page import docs_page

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
    angles = (rows.reshape(-1, 1) * omega, cols.reshape(-1, 1) * omega)
    embed = torch.cat([f(a) for a in angles for f in (torch.sin, torch.cos)],
                      dim=1)
    if cls_token:
        embed = torch.cat([embed.new_zeros(1, embed_dims), embed], dim=0)
    return embed.float().unsqueeze(0)


GridSize = Union[int, Sequence[int]]
GEOMETRY_KEYS = ['crop_boxes', 'flips', 'crop_source_shape']
PACK_HINT = (f'pack it with PackInputs(algorithm_keys={GEOMETRY_KEYS}) after '
             'TwoViewRandomResizedCrop and BlockwiseMaskGenerator')
SAME_GRID_HINT = (
    "Put the crop's size, the mask generator's input_size and the neck's "
    'grid_size on one grid (img_size // patch_size; '
    f"{docs_page('mixing.md#changing-the-patch-grid-width-or-patch-size')})")


class PatchGrid(NamedTuple):
    """The patch grid a SiameseIM model expects of its batches.

    Attributes:
        patch_size (int | tuple): The backbone's patch size.
        grid_size (int | tuple): The neck's patch grid of view a.
        target_grid_size (int | tuple, optional): The neck's grid of view b
            when it differs (a lower-resolution target); None: the same.
    """
    patch_size: GridSize
    grid_size: GridSize
    target_grid_size: Optional[GridSize] = None

    def pixels(self, target: bool = False) -> Tuple[int, int]:
        """The view's size in pixels (view b's with ``target``)."""
        grid = to_2tuple(target and self.target_grid_size or self.grid_size)
        patch = to_2tuple(self.patch_size)
        return grid[0] * patch[0], grid[1] * patch[1]


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


class BatchGeometry(NamedTuple):
    """What the model takes from a batch's data samples.

    Attributes:
        mask (Tensor): (B, L) bool, True = masked, L = view a's patches.
        offsets (CropPairOffsets): View b's crop relative to view a's.
    """
    mask: torch.Tensor
    offsets: CropPairOffsets


def crop_pair_offsets(crop_boxes: torch.Tensor, flips: torch.Tensor,
                      img_widths: torch.Tensor) -> CropPairOffsets:
    """The offsets of view b relative to view a, from the crop pair.

    Crop boxes are (top, left, height, width) in the original, unflipped
    image. A flipped view's horizontal offset is measured in its own
    (mirrored) frame, ``W - left - width``, as the authors do.

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


def stack_field(samples: List[DataSample], key: str) -> torch.Tensor:
    """``key`` of every sample, stacked; a sample without it is named."""
    for i, sample in enumerate(samples):
        if key not in sample:
            raise KeyError(f'data sample {i} has no {key!r}: {PACK_HINT}')
    return torch.stack([
        v if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v))
        for v in (s.get(key) for s in samples)
    ])


def crop_source_shapes(samples: List[DataSample]) -> torch.Tensor:
    """(B, 2) height and width of the image each sample's crops were taken
    from: its ``crop_source_shape``, or, when it has none, its
    ``ori_shape`` metainfo.

    Why the fallback: samples built by hand from a crop pair whose boxes
    are already known carry only ``ori_shape``, the size of the image the
    boxes refer to; no pipeline ran to set ``crop_source_shape``. The
    contract checks (``parity``, ``ddp`` and ``mask_count``, on the
    authors' fixture with boxes in its 64x64 source image) build their
    samples this way, and so may a user feeding their own crops. A
    pipeline-built sample always has ``crop_source_shape``, which wins;
    ``ori_shape`` is the crop's frame only when nothing padded or resized
    the image before the crop, and a wrong one is caught by
    :func:`check_boxes_inside` when the boxes do not fit it.
    """
    shapes = []
    for i, sample in enumerate(samples):
        shape = sample.get('crop_source_shape', sample.get('ori_shape'))
        if shape is None:
            raise KeyError(f"data sample {i} has neither 'crop_source_shape' "
                           "nor an 'ori_shape' metainfo (the size of the "
                           f'image the crops were taken from): {PACK_HINT}')
        shapes.append([float(shape[0]), float(shape[1])])
    return torch.tensor(shapes)


def check_boxes_inside(boxes: torch.Tensor, shapes: torch.Tensor,
                       samples: List[DataSample]) -> None:
    """Refuse a crop box (B, 2, 4) outside its source image (B, 2): the source
    size is then the wrong one (e.g. the ``ori_shape`` of an image padded
    before the crop), which would shift the offsets of mirrored pairs."""
    top, left, h, w = boxes.unbind(-1)  # each (B, 2)
    H, W = shapes[:, :1], shapes[:, 1:]
    bad = (top < 0) | (left < 0) | (top + h > H) | (left + w > W)
    if bool(bad.any()):
        i, k = (int(x) for x in bad.nonzero()[0])
        key = ('crop_source_shape'
               if 'crop_source_shape' in samples[i] else 'ori_shape')
        raise ValueError(
            f'data sample {i}: the crop box (top, left, h, w) '
            f'{boxes[i, k].tolist()} of view {"ab"[k]} does not fit in the '
            f'{int(H[i])}x{int(W[i])} source image given by {key!r}; pack '
            "TwoViewRandomResizedCrop's 'crop_source_shape' (the size of "
            'the image it cropped, after any Pad or resize before it)')


def check_equal_mask_counts(mask: torch.Tensor) -> None:
    """Refuse masks (B, L) that hide different numbers of patches.

    The encoder packs the visible tokens of a batch into one (B, L, C) tensor,
    which needs the same number of masked patches in every sample; otherwise a
    reshape fails or, when the total happens to divide, mixes tokens across
    samples.
    """
    counts = mask.sum(1)
    if bool((counts != counts[0]).any()):
        raise ValueError(
            'the masks of this batch hide different numbers of patches per '
            f'sample ({counts.tolist()}); SiameseIM needs the same count in '
            'every sample: generate them with '
            'BlockwiseMaskGenerator(..., fixed_count=True) or '
            'RandomPatchMaskGenerator')


def check_batch_grid(grid: PatchGrid,
                     mask: torch.Tensor,
                     views: Optional[Sequence[torch.Tensor]] = None) -> None:
    """Refuse a batch off the model's patch grid: masks (B, h, w) or (B, h * w)
    off the neck's ``grid_size``, a view a (B, C, H, W) whose size is not that
    grid at the patch size (the crop's ``size``), a view b off the target grid
    (the crop's ``target_size``).

    One error names every option at fault.
    """
    wrong = []
    g = tuple(to_2tuple(grid.grid_size))
    if mask[0].numel() != g[0] * g[1] or (mask.dim() == 3
                                          and tuple(mask.shape[1:]) != g):
        wrong.append(
            f'the masks are {"x".join(map(str, mask.shape[1:]))} patches '
            f"but the neck's grid_size is {grid.grid_size}: give the mask "
            f"generator's input_size={grid.grid_size} (BlockwiseMaskGenerator"
            ' or RandomPatchMaskGenerator)')
    for view, target, option in ((0, False, 'size'), (1, True, 'target_size')):
        if views is None or len(views) <= view:
            continue
        got, want = tuple(views[view].shape[-2:]), grid.pixels(target)
        if got != want:
            wrong.append(
                f'view {"ab"[view]} is {got[0]}x{got[1]} pixels, not the '
                f'model\'s {want[0]}x{want[1]} (its patch grid at its patch '
                f'size): give TwoViewRandomResizedCrop {option}={want[0]}')
    if wrong:
        patch = to_2tuple(grid.patch_size)
        raise ValueError(
            "this batch is off the model's patch grid (backbone patch size "
            f'{patch[0]}x{patch[1]}, neck grid_size={grid.grid_size}, '
            f'target_grid_size={grid.target_grid_size}): ' + '; '.join(wrong) +
            '. ' + SAME_GRID_HINT)


def batch_geometry(
        data_samples: List[DataSample],
        grid: PatchGrid,
        device: Union[str, torch.device],
        views: Optional[Sequence[torch.Tensor]] = None) -> BatchGeometry:
    """The mask and crop-pair offsets of a batch, checked, on ``device``.

    Each sample needs ``mask`` (on the neck's grid), ``crop_boxes`` and
    ``flips`` (set by ``TwoViewRandomResizedCrop``) and the size of the
    image the crops were taken from (:func:`crop_source_shapes`).

    Args:
        data_samples (list[DataSample]): The batch's samples.
        grid (PatchGrid): The model's patch grid.
        device (str | torch.device): Where the outputs go.
        views (Sequence[Tensor], optional): ``[view_a, view_b]``, to check
            their sizes too (:func:`check_batch_grid`).

    Returns:
        BatchGeometry: ``mask`` (B, L) and ``offsets``.
    """
    mask = stack_field(data_samples, 'mask').to(device).bool()
    check_batch_grid(grid, mask, views)
    mask = mask.flatten(1)
    check_equal_mask_counts(mask)
    boxes = stack_field(data_samples, 'crop_boxes').float()
    flips = stack_field(data_samples, 'flips').bool()
    shapes = crop_source_shapes(data_samples)
    check_boxes_inside(boxes, shapes, data_samples)
    offsets = crop_pair_offsets(boxes, flips, shapes[:, 1])
    return BatchGeometry(mask, offsets.to(device))


def relative_patch_centres(
        offsets: CropPairOffsets,
        grid_size: GridSize,
        target_grid_size: GridSize = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Centres of view b's patches in view a's patch coordinates.

    Args:
        offsets (CropPairOffsets): Output of
            :func:`crop_pair_offsets`.
        grid_size (int | tuple): View a's patch grid (rows, cols).
        target_grid_size (int | tuple, optional): View b's patch grid when it
            differs from view a's (a lower-resolution target).

    Returns:
        tuple: rows and cols, each (B, rows_b * cols_b), in view a's grid
        units (patch (0, 0) of view a is centred at (0, 0)).
    """
    nh, nw = tuple(to_2tuple(grid_size))
    th, tw = tuple(to_2tuple(target_grid_size or grid_size))
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
    scales = (10 * torch.log(
        torch.stack([offsets.delta_h, offsets.delta_w], -1)))[:, None, :,
                                                              None] * omega
    angles = (rows.unsqueeze(-1) * omega, cols.unsqueeze(-1) * omega,
              *scales.expand(-1, rows.shape[1], -1, -1).unbind(2))
    return torch.cat([f(a) for a in angles for f in (torch.sin, torch.cos)],
                     dim=-1)
