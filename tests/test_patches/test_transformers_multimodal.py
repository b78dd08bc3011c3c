"""Import mmsiameseim and its configs beside a transformers release that
mmpretrain 1.2.0's multimodal models cannot import (4.57 and 5.x removed
names they use): simulated by a stand-in transformers 5.0.0 first on the
path, in fresh interpreters."""
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


@pytest.fixture
def newer_transformers(tmp_path):
    pkg = tmp_path / 'transformers'
    pkg.mkdir()
    (pkg / '__init__.py').write_text("__version__ = '5.0.0'\n")
    (pkg / 'activations.py').write_text('ACT2FN = {}\n')  # the rest: gone
    info = tmp_path / 'transformers-5.0.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text(
        'Metadata-Version: 2.1\nName: transformers\nVersion: 5.0.0\n')
    return str(tmp_path)


def _python(code, path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([path, ROOT]))
    return subprocess.run([sys.executable, '-c', code],
                          capture_output=True,
                          text=True,
                          env=env,
                          cwd=ROOT,
                          timeout=300)


def test_configs_build_beside_a_transformers_mmpretrain_cannot_use(
        newer_transformers):
    # the failure a user meets without the guard
    bare = _python('import mmpretrain.models', newer_transformers)
    assert bare.returncode != 0 and 'ImportError' in bare.stderr
    run = _python(
        'import mmsiameseim\n'
        'from mmengine.config import Config\n'
        'from mmengine.registry import init_default_scope\n'
        'from mmpretrain.registry import MODELS\n'
        'init_default_scope("mmpretrain")\n'
        f'model = MODELS.build(Config.fromfile({CONFIG!r}).model)\n'
        'print(type(model).__name__)\n', newer_transformers)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith('SiameseIM')
    assert 'transformers 5.0.0 has no transformers.' in run.stderr
    assert 'left out' in run.stderr


def test_a_transformers_with_every_name_keeps_the_multimodal_models():
    pytest.importorskip('transformers')
    run = _python(
        'import mmsiameseim\n'
        'from mmpretrain.utils import dependency\n'
        'from mmpretrain.registry import MODELS\n'
        'import mmsiameseim.patches.transformers_multimodal as g\n'
        'print(dependency.WITH_MULTIMODAL, MODELS.get("BlipCaption"))\n', '')
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith('True <class') and 'left out' not in \
        run.stderr
