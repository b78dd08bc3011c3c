from typing import Dict, Tuple

import numpy as np
import torch

from mmsiameseim.models.utils import crop_pair_offsets, relative_patch_centres


def placed_patch_centres(crop_boxes, flips, source_shape,
                         grid: int) -> Tuple[np.ndarray, np.ndarray]:
    """Where the predictor is told each patch of view b lies, in view a's.

    patch units (the relative positions p_b): (rows, cols), each (grid *
    grid,), for one sample's crop boxes, flips and source size.
    """
    offsets = crop_pair_offsets(
        torch.as_tensor(np.asarray(crop_boxes))[None],
        torch.as_tensor(np.asarray(flips))[None],
        torch.tensor([float(source_shape[1])]))
    rows, cols = relative_patch_centres(offsets, grid)
    return rows[0].numpy(), cols[0].numpy()


def draw_two_view_sample(image: np.ndarray, results: Dict, grid: int,
                         path: str) -> None:
    """One training sample as a person wants to see it (PNG).

    Panels: the source image with both crop boxes; view a with its blockwise
    mask; view b with its patch grid; view a again with the centre of every
    patch of view b where the predictor is told it lies (the relative
    positions p_b), coloured the same as in the view b panel.

    Args:
        image (ndarray): The source image the crops were taken from.
        results (dict): Output of ``TwoViewRandomResizedCrop`` followed by
            ``BlockwiseMaskGenerator`` (``img``, ``crop_boxes``, ``flips``,
            ``mask``, ``crop_source_shape``).
        grid (int): Patches per side of each view.
        path (str): Output PNG.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.patches as patches
    import matplotlib.pyplot as plt

    view_a, view_b = results['img']
    boxes, flips = results['crop_boxes'], results['flips']
    size = view_a.shape[0]
    step = size / grid
    rows, cols = placed_patch_centres(boxes, flips,
                                      results['crop_source_shape'], grid)
    colours = plt.cm.viridis(np.linspace(0, 1, grid * grid))

    fig, axes = plt.subplots(1, 4, figsize=(16, 4.4))
    cmap = 'gray' if image.ndim == 2 else None
    axes[0].imshow(image, cmap=cmap)
    for k, (colour, name) in enumerate([('tab:red', 'a'), ('tab:cyan', 'b')]):
        top, left, h, w = boxes[k]
        axes[0].add_patch(
            patches.Rectangle((left - .5, top - .5),
                              w,
                              h,
                              fill=False,
                              lw=2,
                              ec=colour))
        axes[0].text(
            left + 0.5,
            top + h - 1.5,
            f'view {name}' + (' (flipped)' if flips[k] else ''),
            color=colour,
            fontsize=9,
            va='bottom',
            fontweight='bold')
    axes[0].set_title('source image and crop boxes')

    axes[1].imshow(view_a, cmap=cmap)
    mask = results['mask']
    for r, c in zip(*np.nonzero(mask)):
        axes[1].add_patch(
            patches.Rectangle((c * step - .5, r * step - .5),
                              step,
                              step,
                              color='tab:red',
                              alpha=.45,
                              lw=0))
    axes[1].set_title(f'view a, {int(mask.sum())}/{mask.size} patches masked')

    axes[2].imshow(view_b, cmap=cmap)
    for i in range(grid * grid):
        r, c = divmod(i, grid)
        axes[2].add_patch(
            patches.Rectangle((c * step - .5, r * step - .5),
                              step,
                              step,
                              fill=False,
                              lw=.5,
                              ec=colours[i]))
        axes[2].plot(
            (c + .5) * step - .5, (r + .5) * step - .5,
            'o',
            ms=3,
            color=colours[i])
    # mark two corners so that flips can be followed between the panels
    corners = [(0, '*', 'top-left patch of view b'),
               (grid - 1, '^', 'top-right patch of view b')]
    for i, marker, label in corners:
        r, c = divmod(i, grid)
        axes[2].plot(
            (c + .5) * step - .5, (r + .5) * step - .5,
            marker,
            ms=14,
            mec='white',
            mfc='tab:orange',
            label=label)
    axes[2].legend(loc='lower center', fontsize=7, framealpha=.8)
    axes[2].set_title('view b (target) and its patches')

    xs, ys = (cols + .5) * step - .5, (rows + .5) * step - .5
    axes[3].imshow(view_a, cmap=cmap, alpha=.7)
    axes[3].add_patch(
        patches.Rectangle((-.5, -.5),
                          size,
                          size,
                          fill=False,
                          lw=2,
                          ec='tab:red'))
    axes[3].scatter(xs, ys, s=12, c=colours, zorder=3)
    for i, marker, _ in corners:
        axes[3].plot(
            xs[i],
            ys[i],
            marker,
            ms=14,
            mec='white',
            mfc='tab:orange',
            zorder=4)
    lo = min(xs.min(), ys.min(), 0) - step
    hi = max(xs.max(), ys.max(), size) + step
    axes[3].set_xlim(lo, hi)
    axes[3].set_ylim(hi, lo)
    axes[3].set_title('where view b\'s patches lie in view a (p_b)')
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
