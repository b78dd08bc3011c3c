"""The Fashion-MNIST configs find the repo's data from any directory, and a
missing dataset is named with the set-up step instead of a download."""
import os
import os.path as osp
import subprocess
import sys

import pytest
from mmengine.config import Config

import mmsiameseim  # noqa: F401
from tests.helpers import ROOT

CFG = osp.join(ROOT, 'configs', 'pretrain',
               'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def test_data_root_is_the_repos_data_folder_from_any_directory(tmp_path):
    code = ('from mmengine.config import Config; import os.path as osp; '
            f'cfg = Config.fromfile({CFG!r}); '
            'print(osp.realpath(cfg.train_dataloader.dataset.data_prefix))')
    out = subprocess.run([sys.executable, '-c', code],
                         cwd=tmp_path,
                         capture_output=True,
                         text=True,
                         check=True)
    assert out.stdout.strip() == osp.realpath(
        osp.join(ROOT, 'data', 'fashion_mnist'))


def test_dataset_builds_from_another_directory(tmp_path, monkeypatch):
    from mmpretrain.registry import DATASETS
    monkeypatch.chdir(tmp_path)
    cfg = Config.fromfile(CFG)
    dataset = DATASETS.build(cfg.train_dataloader.dataset)
    assert len(dataset) == 60000
    assert not os.listdir(tmp_path)  # no data folder left behind


@pytest.mark.fault_matrix(
    'datasets', 'missing', 'LocalFashionMNIST: refused naming the folder, the '
    'files it needs and the set-up step; no download, '
    'nothing created')
def test_missing_files_name_the_folder_and_the_setup_step(tmp_path):
    from mmpretrain.registry import DATASETS
    empty = tmp_path / 'fmnist'
    empty.mkdir()
    with pytest.raises(FileNotFoundError) as err:
        DATASETS.build(dict(type='LocalFashionMNIST', data_prefix=str(empty)))
    assert str(empty) in str(err.value)
    assert 'tools/setup_env.sh' in str(err.value)
    assert 'train-images-idx3-ubyte' in str(err.value)
    assert not os.listdir(empty)
