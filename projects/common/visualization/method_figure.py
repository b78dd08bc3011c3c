"""The method figure of the README and the documentation
(``projects/common/tools/draw_method_figure.py``): SiameseIM (Tao et al., CVPR
2023,
Fig.

2) drawn with matplotlib from shapes only (no data needed).
"""
import os
import os.path as osp

import numpy as np

from projects.common.results import REPO

OUT = osp.join(REPO, 'docs', '_static', 'method.png')

ONLINE, TARGET, LOSS = '#dbe8f6', '#fbe3cf', '#e2f0d9'


def source_image(size: int = 96) -> np.ndarray:
    """A smooth synthetic RGB picture (a sky, a hill and a sun)."""
    y, x = np.mgrid[0:size, 0:size] / size
    img = np.stack([0.55 + 0.3 * y, 0.75 + 0.15 * y, 0.95 - 0.2 * y], -1)
    hill = y > 0.62 + 0.12 * np.sin(6 * x)
    img[hill] = np.stack([0.35 + 0.2 * x, 0.6 + 0.1 * y, 0.3 + 0 * x],
                         -1)[hill]
    sun = (x - 0.72)**2 + (y - 0.25)**2 < 0.012
    img[sun] = (1.0, 0.85, 0.3)
    return img.clip(0, 1)


def crop(img: np.ndarray,
         top: int,
         left: int,
         size: int,
         grid: int = 4,
         out: int = 48) -> np.ndarray:
    """A square crop resized (nearest) to ``out`` pixels."""
    idx = top + (np.arange(out) * size // out)
    jdx = left + (np.arange(out) * size // out)
    return img[idx][:, jdx]


def box(ax, x, y, w, h, text, color, fontsize=9):
    from matplotlib.patches import FancyBboxPatch
    ax.add_patch(
        FancyBboxPatch((x, y),
                       w,
                       h,
                       boxstyle='round,pad=0.02',
                       fc=color,
                       ec='#444444',
                       lw=1))
    ax.text(
        x + w / 2,
        y + h / 2,
        text,
        ha='center',
        va='center',
        fontsize=fontsize,
        wrap=True)


def arrow(ax, x0, y0, x1, y1, style='-|>', ls='-', color='#333333'):
    ax.annotate(
        '',
        xy=(x1, y1),
        xytext=(x0, y0),
        arrowprops=dict(arrowstyle=style, ls=ls, color=color, lw=1.3))


def patch_grid(ax, img, x, y, size, masked=(), grid=4):
    """Draw ``img`` at (x, y) with a patch grid; ``masked`` patches grey."""
    ax.imshow(img, extent=(x, x + size, y, y + size), zorder=2)
    step = size / grid
    for k in range(grid + 1):
        ax.plot([x, x + size], [y + k * step] * 2,
                color='white',
                lw=0.8,
                zorder=3)
        ax.plot(
            [x + k * step] * 2, [y, y + size], color='white', lw=0.8, zorder=3)
    from matplotlib.patches import Rectangle
    for r, c in masked:
        ax.add_patch(
            Rectangle((x + c * step, y + size - (r + 1) * step),
                      step,
                      step,
                      fc='#9a9a9a',
                      ec='white',
                      lw=0.8,
                      zorder=4))


def draw(out: str = OUT) -> str:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(11, 4.4), dpi=150)
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 4.4)
    ax.axis('off')

    # the source image and its two crops
    img = source_image()
    ax.imshow(img, extent=(0.1, 1.9, 1.3, 3.1), zorder=1)
    for (t, l, s), col, name in (((6, 4, 60), '#1f5fa8', 'a'),
                                 ((30, 34, 56), '#c0601a', 'b')):
        ax.add_patch(
            Rectangle((0.1 + l / 96 * 1.8, 3.1 - (t + s) / 96 * 1.8),
                      s / 96 * 1.8,
                      s / 96 * 1.8,
                      fill=False,
                      ec=col,
                      lw=2,
                      zorder=2))
    ax.text(
        1.0,
        1.1,
        'one image,\ntwo random crops',
        ha='center',
        va='top',
        fontsize=9)

    # the views
    view_a = crop(img, 6, 4, 60)
    view_b = crop(img, 30, 34, 56)
    patch_grid(
        ax,
        view_a,
        2.4,
        2.55,
        1.1,
        masked=[(0, 1), (0, 2), (1, 1), (1, 2), (2, 0), (3, 3), (2, 3), (3, 0),
                (1, 0)])
    patch_grid(ax, view_b, 2.4, 0.45, 1.1)
    ax.text(
        2.95, 3.75, 'view a, masked', ha='center', fontsize=9, color='#1f5fa8')
    ax.text(2.95, 0.22, 'view b', ha='center', fontsize=9, color='#c0601a')
    arrow(ax, 1.9, 2.6, 2.35, 3.0)
    arrow(ax, 1.9, 1.8, 2.35, 1.2)

    # online branch
    box(ax, 3.9, 2.7, 1.45, 0.8, 'online encoder\n(ViT, visible\npatches)',
        ONLINE)
    box(ax, 5.65, 2.7, 1.15, 0.8, 'projector', ONLINE)
    box(ax,
        7.1,
        2.55,
        1.55,
        1.1,
        'decoder\n+ mask tokens at\nview b\'s relative\npositions',
        ONLINE,
        fontsize=8.5)
    arrow(ax, 3.55, 3.1, 3.88, 3.1)
    arrow(ax, 5.36, 3.1, 5.63, 3.1)
    arrow(ax, 6.81, 3.1, 7.08, 3.1)
    ax.text(
        7.88,
        3.95,
        'relative position of b in a\n(crop boxes, flips)',
        ha='center',
        fontsize=8,
        color='#555555')
    arrow(ax, 7.88, 3.9, 7.88, 3.67, color='#555555')

    # target branch
    box(ax, 3.9, 0.6, 1.45, 0.8, 'target encoder\n(all patches)', TARGET)
    box(ax, 5.65, 0.6, 1.15, 0.8, 'projector', TARGET)
    arrow(ax, 3.55, 1.0, 3.88, 1.0)
    arrow(ax, 5.36, 1.0, 5.63, 1.0)
    arrow(ax, 4.62, 2.68, 4.62, 1.42, ls='--', color='#777777')
    arrow(ax, 6.22, 2.68, 6.22, 1.42, ls='--', color='#777777')
    ax.text(
        5.5,
        2.05,
        'moving average\n(no gradient)',
        ha='center',
        fontsize=8,
        color='#555555')

    # loss
    box(ax,
        9.1,
        1.55,
        1.75,
        1.2,
        'dense UniGrad loss\npredictions of b\nvs. features of b',
        LOSS,
        fontsize=8.5)
    arrow(ax, 8.66, 3.1, 9.5, 2.78)
    arrow(ax, 6.81, 1.0, 9.5, 1.53)
    fig.tight_layout(pad=0.2)
    os.makedirs(osp.dirname(osp.abspath(out)), exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
