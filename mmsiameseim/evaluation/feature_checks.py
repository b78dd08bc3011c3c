"""Refuse features a classifier on frozen features cannot score: none at
all, labels of another length, or vectors holding NaN or inf (which would
otherwise give an accuracy computed on garbage)."""
import torch


def check_features(feats: torch.Tensor, labels: torch.Tensor,
                   what: str) -> None:
    """Raise unless ``feats`` (N, D) and ``labels`` (N,) are usable.

    Args:
        feats (Tensor): Feature vectors, one row per sample.
        labels (Tensor): Their labels.
        what (str): Which features, for the message (e.g. 'train_feats').

    Raises:
        ValueError: No samples, a length mismatch, or non-finite features;
            the message names ``what`` and the counts.
    """
    if feats.shape[0] != labels.shape[0]:
        raise ValueError(f'{what}: {feats.shape[0]} feature vectors but '
                         f'{labels.shape[0]} labels')
    if feats.shape[0] == 0:
        raise ValueError(f'{what}: no samples; at least one was expected')
    bad = int((~torch.isfinite(feats.reshape(len(feats), -1))).any(1).sum())
    if bad:
        raise ValueError(
            f'{what}: {bad} of {len(feats)} feature vectors hold NaN or inf '
            '(the backbone produced them: check its weights, and use fp32 '
            'if a lower precision overflowed)')
