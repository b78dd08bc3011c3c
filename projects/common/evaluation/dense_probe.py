"""A frozen-backbone dense probe: a linear classifier on every patch token.

The miniature of the paper's dense benchmarks (ADE20k, COCO): the backbone
is frozen, each patch token is classified on its own by one linear layer,
so the score measures what the patch features themselves hold (the
class of the object under them: semantics *and* where they are).
"""
from typing import Dict

import numpy as np
import torch
import torch.nn.functional as F
from mmengine.utils import ProgressBar

from mmsiameseim.precision import autocast


@torch.no_grad()
def patch_tokens(backbone: torch.nn.Module,
                 images: torch.Tensor,
                 batch_size: int = 500,
                 precision: str = 'float32',
                 desc: str = 'patch features') -> torch.Tensor:
    """The last block's patch tokens of normalised images, with a progress
    bar.

    Args:
        backbone (nn.Module): An mmpretrain ``VisionTransformer`` with
            ``out_type='raw'`` (its cls token is dropped) or a backbone
            giving a (N, C, h, w) map.
        images (Tensor): (N, C, H, W) normalised images.
        batch_size (int): Images per forward.
        precision (str): 'float32' or 'bfloat16' / 'float16' autocast.
        desc (str): What the progress message calls these features.

    Returns:
        Tensor: (N, h, w, C) float32 on the CPU.
    """
    out = []
    bar = ProgressBar(len(images))
    print(f'extracting {desc} of {len(images)} images')
    for start in range(0, len(images), batch_size):
        x = images[start:start + batch_size]
        with autocast(x.device.type, precision):
            y = backbone(x)
        y = y[-1] if isinstance(y, (tuple, list)) else y
        if y.dim() == 3:  # (N, extra + h*w, C) tokens
            grid = _token_grid(backbone, x)
            extra = getattr(backbone, 'num_extra_tokens', 1)
            y = y[:, extra:].reshape(len(x), *grid, -1)
        elif y.dim() == 4:  # (N, C, h, w) map
            y = y.permute(0, 2, 3, 1)
        else:
            raise ValueError(f'patch_tokens: {type(backbone).__name__} gave '
                             f'a {tuple(y.shape)} output, not patch tokens')
        out.append(y.float().cpu())
        bar.update(len(x))
    print()
    return torch.cat(out)


def _token_grid(backbone: torch.nn.Module, x: torch.Tensor) -> tuple:
    """The patch grid of input ``x``: its size over the patch embedding's
    stride (a ViT also encodes inputs larger than its ``img_size``)."""
    proj = getattr(getattr(backbone, 'patch_embed', None), 'projection', None)
    if proj is None or not hasattr(proj, 'stride'):
        raise ValueError(f'patch_tokens: {type(backbone).__name__} gives '
                         'tokens but has no patch_embed.projection to lay '
                         'them out')
    return x.shape[-2] // proj.stride[0], x.shape[-1] // proj.stride[1]


def fit_linear_classifier(features: torch.Tensor,
                          labels: torch.Tensor,
                          num_classes: int,
                          l2: float = 1e-4,
                          max_iter: int = 200) -> torch.nn.Module:
    """Multinomial logistic regression on standardised features, fitted to
    convergence with full-batch L-BFGS (deterministic).

    Args:
        features (Tensor): (M, C) features.
        labels (Tensor): (M,) classes in ``[0, num_classes)``.
        num_classes (int): Output classes.
        l2 (float): ``l2/2 ||W||^2`` added to the mean cross-entropy.
        max_iter (int): L-BFGS iterations.

    Returns:
        nn.Module: Features (M, C) -> logits (M, num_classes); the
        standardisation (training mean and std) is part of it.
    """
    x = features.float()
    mean, std = x.mean(0), x.std(0).clamp_min(1e-6)
    x = (x - mean) / std
    torch.manual_seed(0)
    linear = torch.nn.Linear(x.shape[1], num_classes)
    torch.nn.init.zeros_(linear.weight)
    torch.nn.init.zeros_(linear.bias)
    opt = torch.optim.LBFGS(
        linear.parameters(),
        lr=1,
        max_iter=max_iter,
        history_size=20,
        line_search_fn='strong_wolfe')
    y = labels.long()

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(linear(x), y) + \
            l2 / 2 * linear.weight.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)

    class Standardised(torch.nn.Module):

        def __init__(self):
            super().__init__()
            self.register_buffer('mean', mean)
            self.register_buffer('std', std)
            self.linear = linear

        def forward(self, f):
            return self.linear((f.float() - self.mean) / self.std)

    return Standardised().eval()


def segmentation_scores(pred: np.ndarray, target: np.ndarray,
                        num_classes: int) -> Dict[str, object]:
    """Mean IoU over the classes present in ``target`` or ``pred``, and
    per-patch (pixel) accuracy, in percent.

    Returns:
        dict: ``miou``, ``accuracy`` and ``iou`` (per class; None for a
        class in neither).
    """
    pred, target = np.asarray(pred).ravel(), np.asarray(target).ravel()
    conf = np.bincount(
        target * num_classes + pred,
        minlength=num_classes * num_classes).reshape(num_classes, -1)
    tp = np.diag(conf).astype(float)
    union = conf.sum(0) + conf.sum(1) - tp
    iou = [100 * t / u if u else None for t, u in zip(tp, union)]
    present = [v for v in iou if v is not None]
    return dict(
        miou=float(np.mean(present)),
        accuracy=float(100 * tp.sum() / max(conf.sum(), 1)),
        iou=iou)


def dense_probe_scores(train_features: torch.Tensor,
                       train_labels: np.ndarray,
                       test_features: torch.Tensor,
                       test_labels: np.ndarray,
                       num_classes: int,
                       l2: float = 1e-4,
                       max_iter: int = 200,
                       return_prediction: bool = False) -> Dict[str, object]:
    """Fit :func:`fit_linear_classifier` on every training patch and score
    every test patch.

    Args:
        train_features (Tensor): (N, h, w, C) patch features.
        train_labels (np.ndarray): (N, h, w) patch labels.
        test_features (Tensor): (M, h, w, C).
        test_labels (np.ndarray): (M, h, w).
        num_classes (int): Labels, background included.
        l2 (float): See :func:`fit_linear_classifier`.
        max_iter (int): See :func:`fit_linear_classifier`.
        return_prediction (bool): Add ``prediction`` (M, h, w).

    Returns:
        dict: :func:`segmentation_scores` of the test patches.
    """
    for name, f, y in (('train', train_features, train_labels),
                       ('test', test_features, test_labels)):
        if tuple(f.shape[:3]) != tuple(np.shape(y)):
            raise ValueError(f'dense probe: {name} features '
                             f'{tuple(f.shape)} do not match the labels '
                             f'{np.shape(y)} patch for patch')
    dims = train_features.shape[-1]
    clf = fit_linear_classifier(
        train_features.reshape(-1, dims),
        torch.from_numpy(np.asarray(train_labels).reshape(-1)),
        num_classes,
        l2=l2,
        max_iter=max_iter)
    with torch.no_grad():
        pred = clf(test_features.reshape(-1, dims)).argmax(-1).numpy()
    scores = segmentation_scores(pred, test_labels, num_classes)
    if return_prediction:
        scores['prediction'] = pred.reshape(np.shape(test_labels))
    return scores


def raw_patch_pixels(images: torch.Tensor, patch: int) -> torch.Tensor:
    """Each patch's own pixels as its feature: (N, C, H, W) ->
    (N, H/patch, W/patch, C*patch*patch); the floor of the dense probe
    (no context beyond the patch)."""
    n, c, H, W = images.shape
    x = images.reshape(n, c, H // patch, patch, W // patch, patch)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(n, H // patch, W // patch, -1)
