"""Fashion-MNIST as numpy arrays, for the tools that paint smoke datasets
from its real pixels."""
import os.path as osp
from typing import Tuple

import numpy as np

FASHION_MNIST_FILES = {
    'train': ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte'),
    'test': ('t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'),
}


def load_fashion_mnist_arrays(root: str,
                              split: str) -> Tuple[np.ndarray, np.ndarray]:
    """Images (N, 28, 28) uint8 and labels (N,) of one split.

    Args:
        root (str): Folder with the four un-gzipped idx files.
        split (str): 'train' or 'test'.
    """
    from mmpretrain.datasets.mnist import read_image_file, read_label_file
    paths = [osp.join(root, name) for name in FASHION_MNIST_FILES[split]]
    missing = [p for p in paths if not osp.isfile(p)]
    if missing:
        raise FileNotFoundError(
            f'Fashion-MNIST files missing: {missing}. Run tools/setup_env.sh '
            '(it un-gzips the Debian package dataset-fashion-mnist into '
            'data/fashion_mnist) or pass --fashion-mnist DIR with the four '
            'un-gzipped idx files.')
    return (read_image_file(paths[0]).numpy(),
            read_label_file(paths[1]).numpy())
