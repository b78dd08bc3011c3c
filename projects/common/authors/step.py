"""What drives the authors' SiameseIM in our benchmarks and side-by-side
runs, without importing their code: the ``args`` their model reads
(:func:`model_args`), their model behind our ``model(**data,
mode='loss')`` call (:class:`AuthorsStep`) and their inputs for a batch
(:func:`batch`).

Importing their code (and the shims it needs on a current
stack) stays in ``projects/common/authors/code.py``.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn

# the order of their ``rel_pos_21`` tuple
REL_POS_ORDER = ('delta_i', 'delta_j', 'delta_h', 'delta_w', 'relative_flip',
                 'flip_delta_j')


class AuthorsStep(nn.Module):
    """Their model behind the ``model(**data, mode='loss')`` call of our
    benchmark; the momentum update is applied every step, as theirs does
    without gradient accumulation."""

    def __init__(self, model: nn.Module, momentum: float = 0.995) -> None:
        super().__init__()
        self.model = model
        self.momentum = momentum

    def forward(self, x1, x2, rel_pos, mask, mode='loss'):
        loss, _ = self.model(x1, x2, rel_pos, self.momentum, True, mask=mask)
        return dict(loss=loss)


def model_args(dims: int,
               projector_depth: int = 2,
               predictor_depth: int = 4,
               neg_weight: float = 0.02,
               **extra) -> argparse.Namespace:
    """The ``args`` their model reads, as their ViT-B launch script sets
    them (``extra`` adds the training-loop options)."""
    return argparse.Namespace(
        decoder_embed_dim=dims,
        loss_type='sim',
        use_abs_pos_emb=True,
        drop_path_rate=0.,
        init_values=None,
        projector_depth=projector_depth,
        predictor_depth=predictor_depth,
        use_proj_ln=False,
        use_pred_ln=False,
        train_patch_embed=False,
        online_ln=False,
        neg_weight=neg_weight,
        with_blockwise_mask=True,
        **extra)


def batch(boxes: np.ndarray, flips: np.ndarray, masks: np.ndarray,
          widths: np.ndarray, img: int, device: str) -> dict:
    """Their inputs for crop boxes (B, 2, 4: top, left, h, w in the unflipped
    source), flips (B, 2), masks (B, h, w; True = masked) and source widths
    (B,); ``rel_pos`` is the tuple of six numbers their data pipeline
    (``DataAugmentationForSIM``) returns."""
    from mmsiameseim.models.utils import crop_pair_offsets
    offsets = crop_pair_offsets(
        torch.as_tensor(boxes), torch.as_tensor(flips),
        torch.as_tensor(widths))
    rel_pos = [getattr(offsets, k).to(device) for k in REL_POS_ORDER]
    n = len(boxes)
    return dict(
        x1=torch.randn(n, 3, img, img, device=device),
        x2=torch.randn(n, 3, img, img, device=device),
        rel_pos=rel_pos,
        mask=torch.as_tensor(masks).to(device))
