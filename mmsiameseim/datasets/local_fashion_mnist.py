from mmpretrain.datasets import FashionMNIST
from mmpretrain.registry import DATASETS


@DATASETS.register_module()
class LocalFashionMNIST(FashionMNIST):
    """mmpretrain's ``FashionMNIST`` read from a local folder only.

    mmpretrain's dataset downloads into ``data_root`` when the files are
    missing, which on a machine without that network access leaves an
    empty folder behind and a download traceback. This one never downloads
    and, when a file is missing, names the folder and the set-up step that
    fills it.

    Args:
        **kwargs: Arguments of ``FashionMNIST`` (``data_root`` or
            ``data_prefix``, ``split``, ``test_mode``, ...), except
            ``download``.
    """

    def __init__(self, **kwargs) -> None:
        if kwargs.pop('download', False):
            raise ValueError('LocalFashionMNIST never downloads; use '
                             "mmpretrain's FashionMNIST for download=True")
        super().__init__(download=False, **kwargs)

    def load_data_list(self):
        if not self._check_exists():
            files = [name[:-3] for name, _ in self.train_list +
                     self.test_list]
            raise FileNotFoundError(
                f'Fashion-MNIST is not in {self.data_prefix["root"]}: it '
                f'needs the un-gzipped files {files}. `bash '
                'tools/setup_env.sh` puts them in data/fashion_mnist/ (from '
                "Debian's dataset-fashion-mnist), or set data_root to a "
                'folder that has them.')
        return super().load_data_list()
