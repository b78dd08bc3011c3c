"""tools/dist_train.sh, dist_test.sh, slurm_train.sh and slurm_test.sh,
OpenMMLab's launcher scripts: dist_train.sh trains on two CPU processes;
the command lines the others build are read off stand-ins for ``python``
and ``srun`` (no GPU or slurm here)."""
import os
import shlex
import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.test_models.test_algorithms.test_siameseim_distributed import \
    _free_port
from tests.test_tools.test_train_launchers import CHILD, FMNIST, SHIPPED

TOOLS = os.path.join(ROOT, 'tools')
# a stand-in that prints the command line it was given, one word a line
ECHO = '#!/usr/bin/env bash\nprintf "%s\\n" "$0" "$@"\n'


def _bash(script, *args, env=None, cwd=None):
    return subprocess.run(['bash', os.path.join(TOOLS, script), *args],
                          capture_output=True,
                          text=True,
                          timeout=600,
                          env=env,
                          cwd=cwd)


def _stand_in(tmp_path, name):
    """``PATH`` with a ``name`` that prints its arguments first."""
    folder = tmp_path / 'bin'
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(ECHO)
    (folder / name).chmod(0o755)
    return dict(os.environ, PATH=f'{folder}:{os.environ["PATH"]}')


@pytest.mark.skipif(
    not os.path.isfile(os.path.join(FMNIST, 'train-images-idx3-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_dist_train_trains_on_two_processes(tmp_path):
    (tmp_path / 'my_siameseim.py').write_text(
        CHILD.format(shipped=SHIPPED, fmnist=FMNIST))
    env = dict(
        os.environ,
        OMP_NUM_THREADS='1',
        PORT=str(_free_port()),
        PATH=f'{os.path.dirname(sys.executable)}:{os.environ["PATH"]}')
    run = _bash(
        'dist_train.sh',
        'my_siameseim.py',
        '2',
        '--work-dir',
        str(tmp_path / 'work'),
        '--cfg-options',
        'env_cfg.dist_cfg.backend=gloo',
        env=env,
        cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    # 32 images on two ranks of 8: two iterations
    assert 'Epoch(train) [1][2/2]' in out, out[-3000:]
    assert (tmp_path / 'work' / 'epoch_1.pth').is_file()


def test_dist_test_runs_the_test_script_under_torchrun(tmp_path):
    env = dict(_stand_in(tmp_path, 'python'), NNODES='2', NODE_RANK='1')
    run = _bash(
        'dist_test.sh', 'cfg.py', 'ckpt.pth', '4', '--out', 'x.pkl', env=env)
    assert run.returncode == 0, run.stderr
    words = run.stdout.split('\n')[1:-1]
    assert words[:2] == ['-m', 'torch.distributed.run']
    assert {
        '--nnodes=2', '--node_rank=1', '--nproc_per_node=4',
        '--master_port=29500'
    } <= set(words)
    test_py = words.index(os.path.join(TOOLS, 'test.py'))
    assert words[test_py + 1:] == [
        'cfg.py', 'ckpt.pth', '--launcher', 'pytorch', '--out', 'x.pkl'
    ]


@pytest.mark.parametrize('script, fourth, tool, after', [
    ('slurm_train.sh', 'work_dirs/run', 'train.py',
     ['cfg.py', '--work-dir', 'work_dirs/run', '--launcher', 'slurm']),
    ('slurm_test.sh', 'ckpt.pth', 'test.py',
     ['cfg.py', 'ckpt.pth', '--launcher', 'slurm']),
])
def test_slurm_scripts_give_srun_one_task_per_gpu(tmp_path, script, fourth,
                                                  tool, after):
    env = dict(
        _stand_in(tmp_path, 'srun'),
        GPUS='16',
        GPUS_PER_NODE='8',
        SRUN_ARGS='--quotatype=auto --time=10')
    run = _bash(
        script, 'gpu_part', 'sim', 'cfg.py', fourth, '--seed', '1', env=env)
    assert run.returncode == 0, run.stderr
    words = run.stdout.split('\n')[1:-1]
    assert words[:2] == ['-p', 'gpu_part']
    assert {
        '--job-name=sim', '--gres=gpu:8', '--ntasks=16', '--ntasks-per-node=8',
        '--cpus-per-task=5', '--kill-on-bad-exit=1', '--quotatype=auto',
        '--time=10'
    } <= set(words)
    start = words.index('python')
    assert words[start:start +
                 3] == ['python', '-u',
                        os.path.join(TOOLS, tool)]
    assert words[start + 3:] == after + ['--seed', '1']


@pytest.mark.parametrize('script, usage', [
    ('dist_train.sh', 'CONFIG GPUS'),
    ('dist_test.sh', 'CONFIG CHECKPOINT GPUS'),
    ('slurm_train.sh', 'PARTITION JOB_NAME CONFIG WORK_DIR'),
    ('slurm_test.sh', 'PARTITION JOB_NAME CONFIG CHECKPOINT'),
])
def test_missing_arguments_print_the_usage(script, usage):
    run = _bash(script, 'cfg.py')
    assert run.returncode == 2
    assert f'usage: bash {shlex.quote(os.path.join(TOOLS, script))} ' \
        f'{usage}' in run.stderr
