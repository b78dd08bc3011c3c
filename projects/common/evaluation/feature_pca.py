import numpy as np
import torch


def pca_rgb(features: torch.Tensor, components: int = 3) -> np.ndarray:
    """The first principal components of patch features as colours.

    One PCA is fitted on the patches of all the given images together, so
    that a colour means the same in each of them; each component is scaled
    to [0, 1] between its 1st and 99th percentile.

    Args:
        features (Tensor): (N, h, w, C) patch features.
        components (int): Components (3 for RGB).

    Returns:
        np.ndarray: (N, h, w, components) float in [0, 1].
    """
    n, h, w, c = features.shape
    if c < components:
        raise ValueError(f'pca_rgb: {components} components of {c}-wide '
                         'features')
    x = features.reshape(-1, c).double()
    x = x - x.mean(0)
    # eigenvectors of the covariance, largest first
    _, vecs = torch.linalg.eigh(x.T @ x)
    proj = x @ vecs[:, -components:].flip(1)
    lo = torch.quantile(proj, 0.01, dim=0)
    hi = torch.quantile(proj, 0.99, dim=0)
    out = ((proj - lo) / (hi - lo).clamp_min(1e-12)).clamp(0, 1)
    return out.reshape(n, h, w, components).float().numpy()


def nearest_neighbours(queries: torch.Tensor, bank: torch.Tensor,
                       k: int) -> torch.Tensor:
    """Indices (Q, k) of the ``k`` most cosine-similar bank rows of each
    query, most similar first."""
    q = torch.nn.functional.normalize(queries.float(), dim=1)
    b = torch.nn.functional.normalize(bank.float(), dim=1)
    return (q @ b.T).topk(k, dim=1).indices
