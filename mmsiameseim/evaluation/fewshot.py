from typing import Dict, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .feature_checks import check_features


def class_balanced_subset(labels: np.ndarray,
                          fraction: float,
                          seed: int = 0,
                          minimum: int = 1) -> np.ndarray:
    """Indices of a class-balanced ``fraction`` of the samples (e.g. 1 %),
    at least ``minimum`` of each class (all of a class that has fewer)."""
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    chosen = []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        n = min(len(idx), max(minimum, int(round(len(idx) * fraction))))
        chosen.append(rng.choice(idx, n, replace=False))
    return np.sort(np.concatenate(chosen))


def logistic_regression_accuracy(train_feats: torch.Tensor,
                                 train_labels: torch.Tensor,
                                 test_feats: torch.Tensor,
                                 test_labels: torch.Tensor,
                                 l2_strengths: Sequence[float] = (1e-4, 1e-3,
                                                                  1e-2, 1e-1),
                                 folds: int = 3,
                                 seed: int = 0) -> Dict[str, float]:
    """L2-regularised logistic regression on frozen features (few-shot).

    Features are l2-normalised; the regularisation strength (the lambda of
    ``lambda/2 ||w||^2`` per sample) is chosen by stratified k-fold
    cross-validation on the labelled samples only, then the model is refit
    on all of them and scored on the test set.

    Returns:
        dict: ``top1`` test accuracy in percent, the chosen ``l2`` and the
        ``cv_top1`` of each strength.

    Raises:
        ValueError: Unusable features (:func:`check_features`), fewer than
            2 classes, or a class with a single labelled sample.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    check_features(train_feats, train_labels, 'train_feats')
    check_features(test_feats, test_labels, 'test_feats')
    counts = torch.bincount(train_labels.long())
    present = counts.nonzero().flatten().tolist()
    alone = [c for c in present if counts[c] < 2]
    if len(present) < 2 or alone:
        raise ValueError(
            f'train_feats: labelled samples of {len(present)} classes, '
            f'classes {alone} with a single one; fitting and '
            'cross-validating needs at least 2 classes and 2 samples of '
            'each')
    x = F.normalize(train_feats.float(), dim=1).numpy()
    y = train_labels.numpy()
    xt = F.normalize(test_feats.float(), dim=1).numpy()

    def fit(lam, xs, ys):
        clf = LogisticRegression(C=1. / (lam * len(ys)), max_iter=2000)
        return clf.fit(xs, ys)

    min_count = int(np.bincount(y).min())
    folds = max(2, min(folds, min_count))
    cv = {}
    for lam in l2_strengths:
        scores = []
        splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
        for tr, va in splitter.split(x, y):
            scores.append(fit(lam, x[tr], y[tr]).score(x[va], y[va]))
        cv[lam] = 100. * float(np.mean(scores))
    best = max(cv, key=cv.get)
    acc = fit(best, x, y).score(xt, test_labels.numpy())
    return dict(top1=100. * float(acc), l2=best, cv_top1=cv)
