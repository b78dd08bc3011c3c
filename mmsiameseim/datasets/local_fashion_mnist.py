import os.path as osp
import warnings

import numpy as np
from mmpretrain.datasets import FashionMNIST
from mmpretrain.datasets.mnist import read_image_file, read_label_file
from mmpretrain.registry import DATASETS

from .idx_file import check_idx_file

SETUP_STEP = (
    "set the config's data_root to a folder that has them (`--cfg-options "
    'data_root=DIR` with tools/train.py or mim train), or put them there: '
    'the four files of https://github.com/zalandoresearch/fashion-mnist '
    "un-gzipped, or Debian's dataset-fashion-mnist (in a checkout, `bash "
    'tools/setup_env.sh` puts them in data/fashion_mnist/)')


@DATASETS.register_module()
class LocalFashionMNIST(FashionMNIST):
    """mmpretrain's ``FashionMNIST`` read from a local folder only.

    mmpretrain's dataset downloads into ``data_root`` when the files are
    missing, which on a machine without that network access leaves an
    empty folder behind and a download traceback. This one never downloads
    and, when a file is missing, names the folder and the set-up step that
    fills it. The two files of the split are checked before they are read
    (:func:`check_idx_file`): an empty, cut, compressed or text file is
    named with its expected and actual size, and so are image and label
    files that disagree on the number of samples.

    Args:
        **kwargs: Arguments of ``FashionMNIST`` (``data_root`` or
            ``data_prefix``, ``split``, ``test_mode``, ...), except
            ``download``.
    """

    #: samples per split of the released dataset, and the image size
    split_sizes = dict(train=60000, test=10000)
    image_shape = (28, 28)

    def __init__(self, **kwargs) -> None:
        if kwargs.pop('download', False):
            raise ValueError('LocalFashionMNIST never downloads; use '
                             "mmpretrain's FashionMNIST for download=True")
        # mmpretrain's MNIST reads the files test_mode names and, given
        # test_mode=True with its default split='train', warns that it
        # reads the training set, which it does not: the split follows
        # test_mode unless given, and must agree with it when given
        test_mode = bool(kwargs.get('test_mode', False))
        split = kwargs.setdefault('split', 'test' if test_mode else 'train')
        if split not in self.split_sizes or (split == 'test') != test_mode:
            raise ValueError(
                f'LocalFashionMNIST: split={split!r} with test_mode='
                f'{test_mode}: the test files are read with test_mode=True, '
                "the training files with test_mode=False; give split='test' "
                "with test_mode=True or split='train' with test_mode=False")
        super().__init__(download=False, **kwargs)

    def load_data_list(self):
        root = self.data_prefix['root']
        if not self._check_exists():
            files = [name[:-3] for name, _ in self.train_list + self.test_list]
            raise FileNotFoundError(
                f'Fashion-MNIST is not in {root}: it needs the un-gzipped '
                f'files {files}. {SETUP_STEP}.')
        # mmpretrain's MNIST reads the split that test_mode names
        split = 'test' if self.test_mode else 'train'
        images, labels = (osp.join(root, name[:-3]) for name, _ in (
            self.test_list if self.test_mode else self.train_list))
        n = self.split_sizes[split]
        hint = (f'. The Fashion-MNIST {split} files are damaged: '
                f'{SETUP_STEP}.')
        num_images = check_idx_file(
            images, 3, expected_dims=(n, *self.image_shape), hint=hint)[0]
        num_labels = check_idx_file(
            labels, 1, expected_dims=(n, ), hint=hint)[0]
        if num_images != num_labels or num_images == 0:
            raise ValueError(
                f'{images} holds {num_images} images and {labels} '
                f'{num_labels} labels: one label per image, at least one, '
                f'was expected{hint}')
        with warnings.catch_warnings():
            # mmpretrain makes tensors of read-only buffers and copies
            # them to arrays at once: nothing is written to them
            warnings.filterwarnings('ignore',
                                    'The given NumPy array is not writable')
            images = read_image_file(images).numpy()
            labels = read_label_file(labels).tolist()
        # the samples mmpretrain's MNIST makes (a uint8 image, a 0-d int64
        # label), without its per-sample tensor conversions: ten times
        # faster, and every frozen-feature extraction builds the dataset
        return [
            dict(img=image, gt_label=np.array(label, dtype=np.int64))
            for image, label in zip(images, labels)
        ]
