"""A 2-D map of image embeddings: UMAP when installed, else t-SNE."""
from typing import List, Optional, Tuple

import numpy as np


def project_2d(features: np.ndarray, seed: int = 0) -> Tuple[np.ndarray, str]:
    """(N, 2) coordinates of (N, D) features and the method's name: UMAP
    when ``umap-learn`` is installed, else scikit-learn's t-SNE (after PCA
    to 50 dimensions, as its authors advise for wide features)."""
    x = features.reshape(len(features), -1).astype(np.float32)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    try:
        import umap
    except ImportError:
        umap = None
    if umap is not None:
        return umap.UMAP(
            random_state=seed, metric='cosine').fit_transform(x), 'UMAP'
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE
    if x.shape[1] > 50 and len(x) > 50:
        x = PCA(50, random_state=seed).fit_transform(x)
    perplexity = float(min(30, max(2, (len(x) - 1) // 3)))
    return TSNE(
        2, perplexity=perplexity, init='pca',
        random_state=seed).fit_transform(x), 't-SNE'


def plot_embedding_map(features: np.ndarray,
                       path: str,
                       classes: Optional[np.ndarray] = None,
                       class_names: Optional[List[str]] = None,
                       title: str = '') -> str:
    """Draw the 2-D map of ``features`` into ``path`` (PNG), one colour
    per class when ``classes`` are given.

    Returns the projection's name.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    xy, method = project_2d(features)
    fig, ax = plt.subplots(figsize=(7, 6))
    if classes is None:
        ax.scatter(xy[:, 0], xy[:, 1], s=4, alpha=0.7)
    else:
        cmap = plt.get_cmap('tab20' if classes.max() >= 10 else 'tab10')
        for c in np.unique(classes):
            pick = classes == c
            name = class_names[c] if class_names else str(c)
            ax.scatter(
                xy[pick, 0],
                xy[pick, 1],
                s=4,
                alpha=0.7,
                color=cmap(int(c) % cmap.N),
                label=name or '(top level)')
        if len(np.unique(classes)) <= 20:
            ax.legend(markerscale=3, fontsize=7, loc='best')
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(f'{title} ({method}, {len(features)} images)'.strip())
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return method
