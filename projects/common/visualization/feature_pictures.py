"""Pictures of what frozen features hold: PCA of patch features as colours,
nearest neighbours, the dense probe's maps beside the truth.

Every function takes ``models``: name -> (backbone, mean, std) as
:func:`mmsiameseim.evaluation.frozen_vit` gives them, and writes one PNG.
"""
from typing import Dict, List, Sequence, Tuple

import numpy as np
import torch

from mmsiameseim.evaluation import pool_tokens
from projects.common.evaluation import (nearest_neighbours, patch_tokens,
                                        pca_rgb)

Model = Tuple[torch.nn.Module, torch.Tensor, torch.Tensor]
# the 10 Fashion-MNIST classes, then the mosaics' background
LABEL_COLOURS = np.array([[230, 25, 75], [60, 180, 75], [255, 225, 25],
                          [0, 130, 200], [245, 130, 48], [145, 30, 180],
                          [70, 240, 240], [240, 50, 230], [210, 245, 60],
                          [250, 190, 212], [20, 20, 20]]) / 255.


def _plt():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _inputs(images: np.ndarray, mean: torch.Tensor,
            std: torch.Tensor) -> torch.Tensor:
    """(N, H, W[, C]) uint8 -> normalised (N, C, H, W) float."""
    x = torch.from_numpy(np.asarray(images)).float()
    x = x[:, None] if x.dim() == 3 else x.permute(0, 3, 1, 2)
    return (x - mean) / std


def _grid(rows: int, cols: int, scale: float = 1.6):
    plt = _plt()
    fig, axes = plt.subplots(
        rows, cols, figsize=(cols * scale, rows * scale), squeeze=False)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    return plt, fig, axes


def _save(plt, fig, path: str) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_pca(models: Dict[str, Model],
             images: np.ndarray,
             path: str,
             titles: Sequence[str] = ()) -> None:
    """Row 1: the images; one row per model: the first three principal
    components of its patch features as RGB (one PCA over all the images
    of that row)."""
    plt, fig, axes = _grid(len(models) + 1, len(images))
    for j, img in enumerate(images):
        axes[0, j].imshow(img, cmap='gray' if img.ndim == 2 else None)
        if j < len(titles):
            axes[0, j].set_title(titles[j], fontsize=8)
    axes[0, 0].set_ylabel('image', fontsize=9)
    for i, (name, (net, mean, std)) in enumerate(models.items(), 1):
        rgb = pca_rgb(patch_tokens(net, _inputs(images, mean, std)))
        for j in range(len(images)):
            axes[i, j].imshow(rgb[j], interpolation='nearest')
        axes[i, 0].set_ylabel(name, fontsize=9)
    _save(plt, fig, path)


def draw_neighbours(models: Dict[str, Model],
                    queries: np.ndarray,
                    bank: np.ndarray,
                    path: str,
                    features: Dict[str, str],
                    k: int = 6) -> None:
    """Per model and query: the query, then its ``k`` nearest bank images
    by the cosine of the model's frozen feature (``features``: name ->
    'cls_token' or 'avg_featmap', see
    :func:`mmsiameseim.evaluation.pool_tokens`), as kNN ranks them."""
    plt, fig, axes = _grid(len(models) * len(queries), k + 1, scale=1.0)
    for i, (name, (net, mean, std)) in enumerate(models.items()):
        feature = features.get(name, 'cls_token')
        q = pool_tokens(_embed(net, _inputs(queries, mean, std)), feature)
        b = pool_tokens(_embed(net, _inputs(bank, mean, std)), feature)
        nn = nearest_neighbours(q, b, k)
        for j, query in enumerate(queries):
            row = axes[i * len(queries) + j]
            row[0].imshow(query, cmap='gray')
            row[0].set_ylabel(
                f'{name}\n({feature})' if j == 0 else '', fontsize=7)
            for c, idx in enumerate(nn[j].tolist(), 1):
                row[c].imshow(bank[idx], cmap='gray')
    axes[0, 0].set_title('query', fontsize=8)
    for c in range(1, k + 1):
        axes[0, c].set_title(f'#{c}', fontsize=8)
    _save(plt, fig, path)


@torch.no_grad()
def _embed(net: torch.nn.Module,
           x: torch.Tensor,
           batch: int = 500) -> torch.Tensor:
    """All the tokens (N, 1 + L, C) of a ViT with ``out_type='raw'`` (its
    last output)."""
    outs = []
    for i in range(0, len(x), batch):
        y = net(x[i:i + batch])
        outs.append(y[-1] if isinstance(y, (tuple, list)) else y)
    return torch.cat(outs)


def label_image(labels: np.ndarray) -> np.ndarray:
    """(h, w) labels -> (h, w, 3) colours (:data:`LABEL_COLOURS`)."""
    return LABEL_COLOURS[np.asarray(labels)]


def draw_dense_maps(mosaics: np.ndarray, truth: np.ndarray,
                    predictions: Dict[str, np.ndarray], path: str,
                    class_names: List[str]) -> None:
    """Per mosaic: the image, the true patch labels, then each model's
    predicted patch labels; a legend of the classes."""
    plt, fig, axes = _grid(len(predictions) + 2, len(mosaics))
    rows = [('mosaic', None), ('truth', truth)] + list(predictions.items())
    for i, (name, maps) in enumerate(rows):
        axes[i, 0].set_ylabel(name, fontsize=9)
        for j in range(len(mosaics)):
            if maps is None:
                axes[i, j].imshow(mosaics[j], cmap='gray')
            else:
                axes[i, j].imshow(
                    label_image(maps[j]), interpolation='nearest')
    from matplotlib.patches import Patch
    fig.legend(
        handles=[
            Patch(color=LABEL_COLOURS[i], label=n)
            for i, n in enumerate(class_names)
        ],
        loc='lower center',
        ncol=6,
        fontsize=7)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


@torch.no_grad()
def cls_attention(net: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The last block's attention of the cls token to every patch token,
    per head: (N, heads, L), each row summing to 1 with the cls token's
    attention to itself left out of the picture (not renormalised).

    ``net`` is an mmpretrain ``VisionTransformer``: the attention is
    recomputed from the last block's ``attn.qkv`` on that block's normalised
    input, caught by a forward pre-hook (the block itself only returns its
    output)."""
    attn = net.layers[-1].attn
    seen = {}
    hook = attn.register_forward_pre_hook(
        lambda module, args: seen.setdefault('x', args[0]))
    try:
        net(x)
    finally:
        hook.remove()
    tokens = seen['x']
    n, length, _ = tokens.shape
    qkv = attn.qkv(tokens).reshape(n, length, 3, attn.num_heads,
                                   attn.head_dims).permute(2, 0, 3, 1, 4)
    q, k = qkv[0], qkv[1]
    weights = (q[:, :, :1] @ k.transpose(-2, -1) *
               attn.head_dims**-0.5).softmax(-1)
    return weights[:, :, 0, 1:]


def draw_attention(models: Dict[str, Model],
                   images: np.ndarray,
                   path: str,
                   titles: Sequence[str] = ()) -> None:
    """Per model and image: the image, then the last block's cls-token
    attention of each head over it (brighter: more attention)."""
    heads = max(m[0].layers[-1].attn.num_heads for m in models.values())
    plt, fig, axes = _grid(len(models) * len(images), heads + 1, scale=1.3)
    for i, (name, (net, mean, std)) in enumerate(models.items()):
        x = _inputs(images, mean, std)
        att = cls_attention(net, x)
        side = int(round(att.shape[-1]**0.5))
        maps = att.reshape(len(images), -1, side, side)
        for j, img in enumerate(images):
            row = axes[i * len(images) + j]
            row[0].imshow(img, cmap='gray' if img.ndim == 2 else None)
            label = titles[j] if j < len(titles) else ''
            row[0].set_ylabel(f'{name}\n{label}'.strip(), fontsize=7)
            for h in range(maps.shape[1]):
                row[h + 1].imshow(
                    maps[j, h].numpy(),
                    cmap='inferno',
                    interpolation='nearest')
    for h in range(heads):
        axes[0, h + 1].set_title(f'head {h}', fontsize=8)
    _save(plt, fig, path)
