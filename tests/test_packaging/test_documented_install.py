"""The install the docs give, run as they write it in a fresh virtual
environment: the first bash block of docs/get_started.md "From the
released package" (pypi.md's install says the same), with the built wheel
in place of the package's name, the folder of Fashion-MNIST in place of
``/path/to/fashion_mnist/`` and a run cut to two iterations. Everything
else comes from the package index, as for a user."""
import glob
import json
import os
import os.path as osp
import re
import subprocess
import sys

import pytest

from tests.helpers import ROOT

FMNIST = osp.join(ROOT, 'data', 'fashion_mnist')
GET_STARTED = osp.join(ROOT, 'docs', 'get_started.md')
PYPI = osp.join(ROOT, 'docs', 'pypi.md')
SECTION = '### From the released package'
# the run cut to two iterations (16 images, 8 a batch), in the foreground
SHORT = ('train_dataloader.dataset.indices=16 train_dataloader.batch_size=8 '
         'train_dataloader.num_workers=0 '
         'train_dataloader.persistent_workers=False '
         'default_hooks.logger.interval=1')


def _commands(text: str) -> list:
    """The commands of the first ```bash block of ``text``: continuation
    lines joined, comments taken off."""
    block = re.search(r'^```bash\n(.*?)^```', text, re.S | re.M).group(1)
    block = block.replace('\\\n', ' ')
    return [
        re.sub(r'\s+', ' ',
               line.split('  #')[0]).strip() for line in block.splitlines()
        if line.strip() and not line.startswith('#')
    ]


def documented_install() -> list:
    with open(GET_STARTED) as f:
        text = f.read()
    return _commands(text[text.index(SECTION):])


def test_the_package_page_installs_as_the_get_started_page():
    with open(PYPI) as f:
        pypi = _commands(f.read())
    install = documented_install()
    assert install[0] == 'pip install mmsiameseim'
    assert install[1] == 'mim install mmcv-lite==2.1.0'
    assert pypi[:2] == install[:2]
    assert install[2].startswith('mim train mmsiameseim ')


def _run_block(commands: list, wheel: str, venv: str, work: str) -> None:
    """Run documented commands in the environment ``venv`` from ``work``,
    as a user's shell would (the wheel for the package's name)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ('PYTHONPATH', 'PWD', 'VIRTUAL_ENV')
    }
    env.update(
        PATH=osp.join(venv, 'bin') + os.pathsep + env.get('PATH', ''),
        VIRTUAL_ENV=venv,
        OMP_NUM_THREADS='1')
    for command in commands:
        command = command.replace('pip install mmsiameseim',
                                  f'pip install {wheel}', 1)
        command = command.replace('pip install "mmsiameseim[',
                                  f'pip install "{wheel}[', 1)
        command = command.replace('/path/to/fashion_mnist/', FMNIST + '/')
        if command.startswith('mim train '):
            command += f' {SHORT} --work-dir {osp.join(work, "run")}'
        run = subprocess.run(['bash', '-c', command],
                             cwd=work,
                             env=env,
                             capture_output=True,
                             text=True,
                             timeout=3600)
        assert run.returncode == 0, (f'`{command}` failed:\n' +
                                     (run.stdout + run.stderr)[-5000:])


def _python(venv: str, work: str, code: str) -> str:
    run = subprocess.run([osp.join(venv, 'bin', 'python'), '-c', code],
                         cwd=work,
                         env={
                             k: v
                             for k, v in os.environ.items()
                             if k not in ('PYTHONPATH', 'PWD')
                         },
                         capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


@pytest.fixture(scope='module')
def installed(wheel, tmp_path_factory) -> dict:
    """A fresh virtual environment after the first block of the docs."""
    if not osp.isfile(osp.join(FMNIST, 'train-images-idx3-ubyte')):
        pytest.skip('Fashion-MNIST not prepared (tools/setup_env.sh does it)')
    tmp = tmp_path_factory.mktemp('documented')
    venv, work = str(tmp / 'venv'), str(tmp / 'elsewhere')
    os.makedirs(work)
    subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    _run_block(documented_install(), wheel, venv, work)
    return dict(venv=venv, work=work, wheel=wheel)


def test_the_documented_install_trains_in_a_fresh_environment(installed):
    (scalars, ) = glob.glob(
        osp.join(installed['work'], 'run', '*', 'vis_data', 'scalars.json'))
    with open(scalars) as f:
        steps = [json.loads(line) for line in f if '"loss"' in line]
    assert [s['iter'] for s in steps] == [1, 2]
    assert all(0 < s['loss'] < 10 for s in steps)
    # the environment is the user's: the plugin from the wheel, mmcv-lite,
    # a setuptools that still has pkg_resources, mim itself
    out = _python(
        installed['venv'], installed['work'],
        'import mmsiameseim, mmcv, pkg_resources, mim, importlib.metadata '
        'as m; print(mmsiameseim.__file__, m.version("mmcv-lite"), '
        'm.version("setuptools"))')
    package, mmcv_lite, setuptools = out.split()[-3:]
    assert package.startswith(installed['venv']) and mmcv_lite == '2.1.0'
    assert int(setuptools.split('.')[0]) < 81


@pytest.mark.slow
def test_the_documented_dense_stack_builds_mmcv_with_its_ops(installed):
    """The second block (the dense configs' mmcv, built: about 15 minutes
    on 2 cores), run after the first in the same environment: mmcv's ops
    load and the plugin's mmdet and mmseg parts import."""
    with open(GET_STARTED) as f:
        text = f.read()
    section = text[text.index(SECTION):]
    dense = section[section.index('**The dense benchmarks'):]
    _run_block(
        _commands(dense), installed['wheel'], installed['venv'],
        installed['work'])
    out = _python(
        installed['venv'], installed['work'],
        'import importlib.metadata as m, mmcv, mmcv.ops, mmsiameseim.det, '
        'mmsiameseim.seg, pkg_resources; print(mmcv.__version__, '
        'm.version("setuptools"))')
    version, setuptools = out.split()[-2:]
    assert version == '2.1.0' and int(setuptools.split('.')[0]) < 81
