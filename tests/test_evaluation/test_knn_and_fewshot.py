import numpy as np
import torch

from mmsiameseim.evaluation import (class_balanced_subset,
                                    logistic_regression_accuracy,
                                    weighted_knn_accuracy)


def _clusters(n_per_class=30, classes=4, dims=8, noise=0.3, seed=0):
    """Samples around fixed class centres; ``seed`` draws the noise."""
    centres = torch.randn(
        classes, dims, generator=torch.Generator().manual_seed(123)) * 3
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(classes).repeat_interleave(n_per_class)
    x = centres[y] + noise * torch.randn(len(y), dims, generator=g)
    return x, y


def test_knn_separable_clusters_and_vote_weighting():
    x, y = _clusters()
    xt, yt = _clusters(seed=1)
    res = weighted_knn_accuracy(x, y, xt, yt, k=5)
    assert res['top1'] == 100.0 and res['top5'] == 100.0
    # one very close neighbour of class 1 outweighs two far ones of class 0
    train = torch.tensor([[1., 0.], [0., 1.], [0.1, 1.]])
    labels = torch.tensor([1, 0, 0])
    test = torch.tensor([[1., 0.01]])
    res = weighted_knn_accuracy(
        train, labels, test, torch.tensor([1]), k=3, temperature=0.07)
    assert res['top1'] == 100.0
    res = weighted_knn_accuracy(
        train, labels, test, torch.tensor([1]), k=3,
        temperature=1000.)  # ~uniform votes
    assert res['top1'] == 0.0


def test_class_balanced_subset():
    labels = np.repeat(np.arange(10), 600)
    idx = class_balanced_subset(labels, 0.01, seed=0)
    assert len(idx) == 60 and np.all(np.bincount(labels[idx]) == 6)
    assert np.array_equal(idx, class_balanced_subset(labels, 0.01, seed=0))


def test_logistic_regression_learns_and_reports_the_chosen_strength():
    x, y = _clusters(n_per_class=10)
    xt, yt = _clusters(n_per_class=50, seed=1)
    res = logistic_regression_accuracy(x, y, xt, yt)
    assert res['top1'] > 95
    assert res['l2'] in res['cv_top1']
