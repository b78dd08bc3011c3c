"""The built wheel, shared by the package's tests (built once a
session)."""
import glob
import os.path as osp
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT


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


@pytest.fixture(scope='session')
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
