"""The wheel is the plugin: ``pip wheel .`` gives ``mmsiameseim`` alone with
its configs, model index and the user's tools under ``mmsiameseim/.mim/``;
installed away from the checkout (a virtual environment that sees the
shared site-packages but not the editable install, run from a temporary
folder without PYTHONPATH), it imports, reads its shipped configs and
``mim train mmsiameseim CONFIG`` trains from them."""
import ast
import glob
import json
import os
import os.path as osp
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.helpers import ROOT

FMNIST = osp.join(ROOT, 'data', 'fashion_mnist')
CONFIG = 'siameseim_vit-tiny-p4_1xb64-fp32-coslr-1e_fashionmnist.py'
# the checkout's parts that stay out of the wheel
NOT_SHIPPED = ('projects', 'tests', 'tools', 'configs', 'docs')


@pytest.fixture(scope='module')
def installed(wheel, tmp_path_factory) -> dict:
    """A virtual environment with the wheel installed, whose further
    packages come from this environment's site-packages, listed in a .pth
    file: the .pth files there (the editable install's finder among them)
    are not processed, so the checkout is out of sight. Returns its python
    and the folder to run from."""
    tmp = tmp_path_factory.mktemp('installed')
    venv = str(tmp / 'venv')
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', venv],
                   check=True)
    python = osp.join(venv, 'bin', 'python')
    site = subprocess.run([
        python, '-c', 'import sysconfig; '
        "print(sysconfig.get_paths()['purelib'])"
    ],
                          check=True,
                          capture_output=True,
                          text=True).stdout.strip()
    with open(osp.join(site, 'shared_site_packages.pth'), 'w') as f:
        f.write(sysconfig.get_paths()['purelib'] + '\n')
    subprocess.run([
        sys.executable, '-m', 'pip', 'install', '-q', '--no-deps',
        '--no-index', '--target', site, wheel
    ],
                   check=True)
    cwd = tmp / 'elsewhere'
    cwd.mkdir()
    return dict(python=python, site=site, cwd=str(cwd))


def _run(installed: dict, argv: list, timeout: int = 600):
    env = {
        k: v
        for k, v in os.environ.items() if k not in ('PYTHONPATH', 'PWD')
    }
    env['OMP_NUM_THREADS'] = '1'
    return subprocess.run(
        [installed['python']] + argv,
        cwd=installed['cwd'],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout)


def _repo_files(folder: str, suffixes: tuple) -> set:
    return {
        osp.relpath(p, ROOT)
        for p in glob.glob(osp.join(ROOT, folder, '**', '*'), recursive=True)
        if osp.isfile(p) and p.endswith(suffixes)
    }


def test_the_wheel_is_the_plugin_with_its_configs(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    version = osp.basename(wheel).split('-')[1]
    assert {n.split('/')[0]
            for n in names
            } == {'mmsiameseim', f'mmsiameseim-{version}.dist-info'}
    mim = 'mmsiameseim/.mim/'
    shipped = {n[len(mim):] for n in names if n.startswith(mim)}
    # every config, metafile and config README, and the model index
    assert _repo_files('configs', ('.py', '.yml', '.md')) <= shipped
    assert 'model-index.yml' in shipped
    # the docs' pages, which error messages name; not the built site
    assert 'docs/pretraining/resume_and_preemption.md' in shipped
    assert not [
        n for n in shipped
        if n.startswith('docs/') and ('_build' in n or not n.endswith('.md'))
    ]
    assert {'tools/train.py', 'tools/test.py'} <= shipped
    # the shipped tools need nothing the wheel leaves out
    zf = zipfile.ZipFile(wheel)
    for n in names:
        if n.startswith(mim + 'tools/') and n.endswith('.py'):
            tree = ast.parse(zf.read(n))
            for node in ast.walk(tree):
                mods = [a.name for a in node.names] if isinstance(
                    node, ast.Import) else [node.module or ''] if isinstance(
                        node, ast.ImportFrom) else []
                for mod in mods:
                    assert mod.split('.')[0] not in NOT_SHIPPED, (n, mod)
    meta = zf.read(
        next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
    assert 'License: Apache-2.0' in meta \
        or 'License-Expression: Apache-2.0' in meta
    assert 'Requires-Dist: mmpretrain' in meta
    assert '\n# mmsiameseim\n' in meta  # the long description
    assert any('.dist-info/' in n and n.endswith('/LICENSE') for n in names)


def test_installed_away_from_the_checkout_it_imports_and_reads_its_configs(
        installed):
    script = (
        'import importlib.util, json, os.path as osp\n'
        'import mmsiameseim, mmsiameseim.docs_page\n'
        'from mmengine.config import Config\n'
        'from mim.utils import get_installed_path\n'
        'root = osp.join(osp.dirname(mmsiameseim.__file__), ".mim")\n'
        'cfg = Config.fromfile(osp.join(root, "configs", "pretrain", '
        f'"{CONFIG}"))\n'
        'print(json.dumps(dict(\n'
        '    package=mmsiameseim.__file__,\n'
        '    mim_root=get_installed_path("mmsiameseim"),\n'
        '    lab=importlib.util.find_spec("projects") is not None,\n'
        '    page=mmsiameseim.docs_page.docs_page("pretraining/memory.md"),\n'
        '    model=cfg.model.type, head=cfg.model.head.loss.type,\n'
        '    index=osp.isfile(osp.join(root, "model-index.yml")))))\n')
    run = _run(installed, ['-c', script])
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out['package'] == osp.join(installed['site'], 'mmsiameseim',
                                      '__init__.py')
    assert out['mim_root'] == osp.join(installed['site'], 'mmsiameseim')
    assert not out['lab']
    # a message names a page that is there
    assert out['page'] == osp.join(installed['site'], 'mmsiameseim', '.mim',
                                   'docs', 'pretraining', 'memory.md')
    assert osp.isfile(out['page'])
    assert out['model'] == 'SiameseIM' and out['head'] == 'UniGradLoss'
    assert out['index']
    assert 'MultiScaleDeformableAttention' not in run.stderr


def test_mim_search_reads_the_shipped_model_index(installed):
    run = _run(installed, ['-m', 'mim', 'search', 'mmsiameseim'])
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert f'config id: {CONFIG[:-3]}' in run.stdout


@pytest.mark.skipif(
    not osp.isfile(osp.join(FMNIST, 'train-images-idx3-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_mim_trains_a_shipped_config_away_from_the_checkout(installed):
    """``mim train mmsiameseim CONFIG``: the config found by its name in the
    installed package, two iterations on Fashion-MNIST."""
    work_dir = osp.join(installed['cwd'], 'work_dir')
    run = _run(installed, [
        '-m', 'mim', 'train', 'mmsiameseim', CONFIG, '--work-dir', work_dir,
        '--cfg-options', f'data_root={FMNIST}/',
        'train_dataloader.dataset.indices=16', 'train_dataloader.batch_size=8',
        'train_dataloader.num_workers=0',
        'train_dataloader.persistent_workers=False',
        'default_hooks.logger.interval=1'
    ])
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    shipped = osp.join(installed['site'], 'mmsiameseim', '.mim', 'configs',
                       'pretrain', CONFIG)
    assert f'will use {shipped} instead' in run.stdout
    # the one data root: the kNN hook's sets moved with the training set
    assert f'data_root={FMNIST}/: 3 path(s)' in run.stdout
    (scalars, ) = glob.glob(
        osp.join(work_dir, '*', 'vis_data', 'scalars.json'))
    with open(scalars) as f:
        steps = [json.loads(line) for line in f if '"loss"' in line]
    assert [s['iter'] for s in steps] == [1, 2]
    assert all(0 < s['loss'] < 10 for s in steps)


@pytest.mark.skipif(
    not osp.isfile(osp.join(FMNIST, 'train-images-idx3-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_mim_trains_on_two_processes_as_the_docs_write_it(installed):
    """``mim train mmsiameseim CONFIG --launcher pytorch --gpus 2`` (what
    the docs write) on the CPU: mim starts ``python -m
    torch.distributed.launch``, which passes ``--local-rank`` first; gloo
    instead of nccl is the one option added."""
    work_dir = osp.join(installed['cwd'], 'work_dir_2')
    run = _run(installed, [
        '-m', 'mim', 'train', 'mmsiameseim', CONFIG, '--launcher', 'pytorch',
        '--gpus', '2', '--work-dir', work_dir, '--cfg-options',
        'env_cfg.dist_cfg.backend=gloo', f'data_root={FMNIST}/',
        'train_dataloader.dataset.indices=32', 'train_dataloader.batch_size=8',
        'train_dataloader.num_workers=0',
        'train_dataloader.persistent_workers=False',
        'default_hooks.logger.interval=1'
    ])
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-5000:]
    assert 'torch.distributed.launch' in out and 'does not exist' not in out
    # 32 images on two ranks of 8 a batch: two iterations
    assert 'Epoch(train) [1][2/2]' in out, out[-3000:]
    assert osp.isfile(osp.join(work_dir, 'epoch_1.pth'))


@pytest.mark.skipif(
    not osp.isfile(osp.join(FMNIST, 'train-images-idx3-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_mim_tests_on_two_processes_as_the_docs_write_it(installed):
    """``mim test mmsiameseim CONFIG --checkpoint CKPT --launcher pytorch
    --gpus 2`` on the CPU: a linear probe trained for one short epoch by
    ``mim train``, then tested on two processes (the checkpoint after the
    launcher's ``--local-rank``)."""
    probe = 'vit-tiny-p4_linear-probe-10e_fashionmnist.py'
    small = [
        f'data_root={FMNIST}/', 'model.backbone.init_cfg=None',
        'train_dataloader.dataset.indices=16', 'train_dataloader.batch_size=8',
        'train_cfg.max_epochs=1'
    ] + [
        f'{split}_dataloader.{key}' for split in ('train', 'val', 'test')
        for key in ('num_workers=0', 'persistent_workers=False')
    ] + ['val_dataloader.dataset.indices=16']
    work_dir = osp.join(installed['cwd'], 'probe')
    run = _run(installed, [
        '-m', 'mim', 'train', 'mmsiameseim', probe, '--work-dir', work_dir,
        '--cfg-options', *small
    ])
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    run = _run(installed, [
        '-m', 'mim', 'test', 'mmsiameseim', probe, '--checkpoint',
        osp.join(work_dir, 'epoch_1.pth'), '--launcher', 'pytorch', '--gpus',
        '2', '--work-dir', work_dir + '_test', '--cfg-options',
        'env_cfg.dist_cfg.backend=gloo', *small,
        'test_dataloader.dataset.indices=32'
    ])
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-5000:]
    assert 'torch.distributed.launch' in out and 'does not exist' not in out
    assert 'accuracy/top1' in out, out[-3000:]
