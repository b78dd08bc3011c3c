"""tools/train.py (what ``mim train mmsiameseim`` runs) takes what launchers
pass, and a config of the user's own folder inherits a shipped one as
``mmsiameseim::PATH``."""
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT, load_tool
from tests.test_models.test_algorithms.test_siameseim_distributed import \
    _free_port

FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')
SHIPPED = 'pretrain/siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'
CHILD = '''_base_ = 'mmsiameseim::{shipped}'
train_dataloader = dict(
    batch_size=8, num_workers=0, persistent_workers=False,
    dataset=dict(indices=32, data_root={fmnist!r}))
custom_hooks = [dict(type='StopOnNonFiniteLossHook', interval=1)]
precision = 'float32'
default_hooks = dict(logger=dict(interval=1))
'''


@pytest.mark.parametrize('argv, first', [
    (['cfg.py', '--launcher', 'pytorch'], ['cfg.py', '--launcher', 'pytorch']),
    (['--local-rank=1', 'cfg.py', '--launcher', 'pytorch'
      ], ['cfg.py', '--local-rank=1', '--launcher', 'pytorch']),
    (['--local_rank', '0', 'cfg.py'], ['cfg.py', '--local_rank', '0']),
    (['-h'], ['-h']),
])
def test_the_config_goes_first_wherever_a_launcher_put_it(argv, first):
    assert load_tool('train.py').config_first(argv) == first


@pytest.mark.skipif(
    not os.path.isfile(os.path.join(FMNIST, 'train-images-idx3-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_an_own_child_config_trains_under_the_launcher_mim_starts(tmp_path):
    """What ``mim train mmsiameseim CONFIG --launcher pytorch --gpus 2``
    runs, on two CPU processes (gloo): ``python -m
    torch.distributed.launch`` puts ``--local-rank=N`` before the config."""
    own = tmp_path / 'own'
    own.mkdir()
    (own / 'my_siameseim.py').write_text(
        CHILD.format(shipped=SHIPPED, fmnist=FMNIST))
    run = subprocess.run([
        sys.executable, '-m', 'torch.distributed.launch', '--nproc_per_node=2',
        f'--master_port={_free_port()}',
        os.path.join(ROOT, 'tools', 'train.py'), 'my_siameseim.py',
        '--launcher', 'pytorch', '--work-dir',
        str(tmp_path / 'work'), '--cfg-options',
        'env_cfg.dist_cfg.backend=gloo'
    ],
                         cwd=own,
                         env=dict(os.environ, OMP_NUM_THREADS='1'),
                         capture_output=True,
                         text=True,
                         timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    assert 'does not exist' not in out
    # 32 images on two ranks of 8: two iterations, each rank half the data
    assert 'Epoch(train) [1][2/2]' in out, out[-3000:]
    assert (tmp_path / 'work' / 'epoch_1.pth').is_file()
