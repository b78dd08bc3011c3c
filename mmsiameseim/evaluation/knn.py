from typing import Dict

import torch
import torch.nn.functional as F

from .feature_checks import check_features


@torch.no_grad()
def weighted_knn_accuracy(train_feats: torch.Tensor,
                          train_labels: torch.Tensor,
                          test_feats: torch.Tensor,
                          test_labels: torch.Tensor,
                          k: int = 20,
                          temperature: float = 0.07,
                          batch_size: int = 1024) -> Dict[str, float]:
    """Weighted cosine k-NN classification (as in DINO, Caron et al. 2021).

    Each test sample votes with its ``k`` most similar training samples
    (all of them when there are fewer than ``k``), weighted by
    ``exp(cosine / temperature)``.

    Args:
        train_feats (Tensor): (N, D) training features.
        train_labels (Tensor): (N,) integer labels.
        test_feats (Tensor): (M, D) test features.
        test_labels (Tensor): (M,) integer labels.
        k (int): Neighbours. Defaults to 20.
        temperature (float): Vote temperature. Defaults to 0.07.
        batch_size (int): Test samples per similarity block.

    Returns:
        dict: ``top1`` and ``top5`` accuracy in percent, and ``k``, the
        neighbours used.

    Raises:
        ValueError: No samples on either side, labels of another length,
            or features holding NaN or inf (:func:`check_features`).
    """
    check_features(train_feats, train_labels, 'train_feats')
    check_features(test_feats, test_labels, 'test_feats')
    train = F.normalize(train_feats.float(), dim=1)
    test = F.normalize(test_feats.float(), dim=1)
    train_labels = train_labels.long()
    num_classes = int(train_labels.max()) + 1
    k = min(k, train.shape[0])
    correct1 = correct5 = 0
    for start in range(0, test.shape[0], batch_size):
        sims, idx = (test[start:start + batch_size] @ train.T).topk(k, dim=1)
        weights = (sims / temperature).exp()
        votes = torch.zeros(sims.shape[0], num_classes)
        votes.scatter_add_(1, train_labels[idx], weights)
        top = votes.topk(min(5, num_classes), dim=1).indices
        truth = test_labels[start:start + batch_size].long().unsqueeze(1)
        correct1 += int((top[:, :1] == truth).sum())
        correct5 += int((top == truth).any(1).sum())
    n = test.shape[0]
    return dict(top1=100. * correct1 / n, top5=100. * correct5 / n, k=k)
