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
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.helpers import ROOT

FMNIST = osp.join(ROOT, 'data', 'fashion_mnist')
CONFIG = 'siameseim_vit-tiny-p4_1xb64-fp32-coslr-1e_fashionmnist.py'
# the checkout's parts that stay out of the wheel
NOT_SHIPPED = ('mmsiameseim_lab', 'tests', 'tools', 'configs', 'docs')


def _copy_sources(dst: str) -> None:
    """The checkout without its environment, data, git and build outputs
    (``pip wheel`` builds in the source folder)."""
    skip = {'.venv', 'data', '.git', 'work_dirs', 'build', 'dist'}
    shutil.copytree(
        ROOT,
        dst,
        symlinks=True,
        ignore=lambda folder, names: [
            n for n in names if (folder == ROOT and n in skip) or n in
            ('__pycache__', '.mim') or n.endswith('.egg-info')
        ])


@pytest.fixture(scope='module')
def wheel(tmp_path_factory) -> str:
    """The wheel ``pip wheel .`` builds from a copy of the checkout."""
    tmp = tmp_path_factory.mktemp('wheel')
    src, out = str(tmp / 'src'), str(tmp / 'dist')
    _copy_sources(src)
    run = subprocess.run([
        sys.executable, '-m', 'pip', 'wheel', '--no-deps',
        '--no-build-isolation', '--no-index', '-q', '-w', out, src
    ],
                         capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    (path, ) = glob.glob(osp.join(out, 'mmsiameseim-*.whl'))
    return path


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
        'import mmsiameseim\n'
        'from mmengine.config import Config\n'
        'from mim.utils import get_installed_path\n'
        'root = osp.join(osp.dirname(mmsiameseim.__file__), ".mim")\n'
        'cfg = Config.fromfile(osp.join(root, "configs", "pretrain", '
        f'"{CONFIG}"))\n'
        'print(json.dumps(dict(\n'
        '    package=mmsiameseim.__file__,\n'
        '    mim_root=get_installed_path("mmsiameseim"),\n'
        '    lab=importlib.util.find_spec("mmsiameseim_lab") is not None,\n'
        '    model=cfg.model.type, head=cfg.model.head.loss.type,\n'
        '    index=osp.isfile(osp.join(root, "model-index.yml")))))\n')
    run = _run(installed, ['-c', script])
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out['package'] == osp.join(installed['site'], 'mmsiameseim',
                                      '__init__.py')
    assert out['mim_root'] == osp.join(installed['site'], 'mmsiameseim')
    assert not out['lab']
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
    hook = 'custom_hooks.2.{}_dataloader.dataset.data_prefix=' + FMNIST + '/'
    run = _run(installed, [
        '-m', 'mim', 'train', 'mmsiameseim', CONFIG, '--work-dir', work_dir,
        '--cfg-options', f'train_dataloader.dataset.data_prefix={FMNIST}/',
        'train_dataloader.dataset.indices=16', 'train_dataloader.batch_size=8',
        'train_dataloader.num_workers=0',
        'train_dataloader.persistent_workers=False',
        hook.format('bank'),
        hook.format('query'), 'default_hooks.logger.interval=1'
    ])
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    shipped = osp.join(installed['site'], 'mmsiameseim', '.mim', 'configs',
                       'pretrain', CONFIG)
    assert f'will use {shipped} instead' in run.stdout
    (scalars, ) = glob.glob(
        osp.join(work_dir, '*', 'vis_data', 'scalars.json'))
    with open(scalars) as f:
        steps = [json.loads(line) for line in f if '"loss"' in line]
    assert [s['iter'] for s in steps] == [1, 2]
    assert all(0 < s['loss'] < 10 for s in steps)
