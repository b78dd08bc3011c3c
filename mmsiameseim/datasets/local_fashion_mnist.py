import os.path as osp

from mmpretrain.datasets import FashionMNIST
from mmpretrain.registry import DATASETS

from .idx_file import check_idx_file

SETUP_STEP = ('`bash tools/setup_env.sh` puts them in data/fashion_mnist/ '
              "(from Debian's dataset-fashion-mnist), or set data_root to a "
              'folder that has them')


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
        return super().load_data_list()
