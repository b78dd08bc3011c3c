"""SiameseIM's own picture: for a two-view pair, how well the predictor,
reading view a (masked), matches the target's feature of each patch of view
b; drawn on both views."""
from typing import List, Sequence

import numpy as np
import torch
from mmengine.config import Config

from mmsiameseim.models.utils import batch_geometry


def load_siameseim(checkpoint: str, cfg: Config) -> torch.nn.Module:
    """The whole SiameseIM model of a pretraining config (online encoder,
    neck, momentum target) with every weight of ``checkpoint``, strictly,
    in eval mode.

    Raises:
        ValueError: The config's model is not SiameseIM with a feature
            target (there is no predictor-to-target similarity otherwise).
    """
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS

    from mmsiameseim.checkpoint.reader import (read_checkpoint,
                                               read_checkpoint_state)
    if cfg.model.get('type') != 'SiameseIM' or \
            cfg.model.get('target_type', 'feature') != 'feature':
        raise ValueError(
            f'{checkpoint}: prediction pictures need a SiameseIM model with '
            f'a feature target, its config has type='
            f'{cfg.model.get("type")!r}')
    init_default_scope('mmpretrain')
    model = MODELS.build(cfg.model)
    state = read_checkpoint_state(read_checkpoint(checkpoint)).state_dict
    model.load_state_dict(state, strict=True)
    model.eval()
    return model


def two_view_pairs(cfg: Config,
                   images: Sequence[np.ndarray],
                   seed: int = 7) -> List[dict]:
    """Each image through the config's training pipeline (its loading
    step left out): two views, crop boxes, flips and view a's mask."""
    from mmpretrain.registry import TRANSFORMS
    steps = [
        TRANSFORMS.build(t) for t in cfg.train_dataloader.dataset.pipeline
        if 'Load' not in t['type']
    ]
    np.random.seed(seed)
    torch.manual_seed(seed)
    out = []
    for img in images:
        # mmcv's arrays are BGR; grey stays 2-D
        data = np.ascontiguousarray(img[..., ::-1] if img.ndim == 3 else img)
        results = dict(
            img=data, img_shape=data.shape[:2], ori_shape=data.shape[:2])
        for step in steps:
            results = step(results)
        out.append(results)
    return out


@torch.no_grad()
def prediction_similarity(model: torch.nn.Module,
                          pairs: List[dict]) -> np.ndarray:
    """Cosine similarity between the predictor's output for each patch of
    view b and the momentum target's (projected) feature of that patch, as
    the loss compares them: (N, grid, grid)."""
    from mmengine.dataset import default_collate
    batch = model.data_preprocessor(default_collate(pairs), True)
    view_a, view_b = batch['inputs'][0], batch['inputs'][1]
    samples = batch['data_samples']
    geo = batch_geometry(samples, model.patch_grid, view_a.device,
                         (view_a, view_b))
    pred = model.neck(model.backbone(view_a, geo.mask), geo.mask, geo.offsets)
    target = model.target.module['projector'](
        model.target.module['backbone'](view_b))[:, 1:]
    sim = torch.nn.functional.cosine_similarity(pred, target, dim=-1)
    side = int(round(sim.shape[1]**0.5))
    return sim.reshape(len(pairs), side, side).float().numpy()


def draw_prediction_pairs(model: torch.nn.Module,
                          pairs: List[dict],
                          path: str,
                          name: str = '') -> None:
    """One row per pair: view a with its mask, view a with the centre of
    every patch of view b where the predictor is told it lies, coloured by
    how well that patch's prediction matches the target, then view b with
    the same similarity over its patches (PNG)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from projects.common.visualization.two_view_sample import \
        placed_patch_centres
    sims = prediction_similarity(model, pairs)
    grid = sims.shape[-1]
    # one colour scale for the figure, from its lowest cosine to 1: the
    # differences between patches are what the picture is for
    low = min(float(np.floor(sims.min() * 10) / 10), 0.9)
    fig, axes = plt.subplots(
        len(pairs), 3, figsize=(10, 3.3 * len(pairs)), squeeze=False)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    for i, (pair, sim) in enumerate(zip(pairs, sims)):
        view_a, view_b = _show(pair['inputs'][0]), _show(pair['inputs'][1])
        mask = np.asarray(pair['data_samples'].mask).reshape(grid, grid)
        size = view_a.shape[0]
        step = size / grid
        cmap = 'gray' if view_a.ndim == 2 else None
        axes[i, 0].imshow(view_a, cmap=cmap)
        shade = np.zeros((grid, grid, 4))
        shade[mask.astype(bool)] = (1, 0, 0, .45)
        axes[i, 0].imshow(
            shade,
            extent=(-.5, size - .5, size - .5, -.5),
            interpolation='nearest')
        axes[i, 0].set_ylabel(f'{name}\npair {i}'.strip(), fontsize=8)
        s = pair['data_samples']
        rows, cols = placed_patch_centres(s.crop_boxes, s.flips,
                                          s.crop_source_shape, grid)
        axes[i, 1].imshow(view_a, cmap=cmap)
        dots = axes[i, 1].scatter(
            (cols + .5) * step - .5, (rows + .5) * step - .5,
            c=sim.ravel(),
            cmap='viridis',
            vmin=low,
            vmax=1,
            s=18,
            edgecolors='white',
            linewidths=.3)
        axes[i, 1].set_xlim(-.5, size - .5)
        axes[i, 1].set_ylim(size - .5, -.5)
        axes[i, 2].imshow(view_b, cmap=cmap)
        axes[i, 2].imshow(
            sim,
            cmap='viridis',
            vmin=low,
            vmax=1,
            alpha=.6,
            extent=(-.5, view_b.shape[1] - .5, view_b.shape[0] - .5, -.5),
            interpolation='nearest')
        axes[i, 2].set_xlabel(f'mean cosine {sim.mean():.2f}', fontsize=8)
    axes[0, 0].set_title('view a (red: masked)', fontsize=9)
    axes[0, 1].set_title('view b\'s patches as placed on view a', fontsize=9)
    axes[0, 2].set_title('view b: prediction vs target', fontsize=9)
    fig.colorbar(dots, ax=axes[:, 2].tolist(), shrink=.8, label='cosine')
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _show(view: torch.Tensor) -> np.ndarray:
    """A packed (C, H, W) uint8 view as an image array (grey 2-D, or RGB
    from mmcv's BGR)."""
    x = np.asarray(view)
    return x[0] if x.shape[0] == 1 else x.transpose(1, 2, 0)[..., ::-1]
