"""Without mmcv's compiled ops, the dense side stops at once and names the
command that builds them (mmsiameseim/full_stack.py)."""
import os
import subprocess
import sys

import pytest

from mmsiameseim.full_stack import FullStackMissingError, require_full_stack

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Make ``mmcv._ext`` fail to load in a fresh interpreter, as on the
# pretraining stack (mmcv-lite: no such module) or with ops built against
# another torch (an undefined symbol).
BLOCK_MISSING = "sys.modules['mmcv._ext'] = None"
BLOCK_UNDEFINED = '''
class _Broken:
    def find_spec(self, name, path=None, target=None):
        if name == 'mmcv._ext':
            raise ImportError('/x/mmcv/_ext.so: undefined symbol: _ZN3c10')
sys.meta_path.insert(0, _Broken())
'''


def _run_without_ops(block, code):
    """Run ``code`` with ``mmcv._ext`` blocked; the last traceback."""
    out = subprocess.run(
        [sys.executable, '-c', f'import sys\n{block}\n{code}'],
        capture_output=True,
        text=True,
        cwd=ROOT)
    assert out.returncode != 0, out.stdout
    assert 'Traceback' in out.stderr, out.stderr
    return out.stderr[out.stderr.rindex('Traceback'):]


@pytest.mark.parametrize('module,block,cause', [
    ('mmsiameseim.det', BLOCK_MISSING, 'halted; None in sys.modules'),
    ('mmsiameseim.seg', BLOCK_UNDEFINED, 'undefined symbol'),
])
def test_dense_import_without_ops_names_setup_full(module, block, cause):
    err = _run_without_ops(block, f'import {module}')
    assert ('\nmmsiameseim.full_stack.FullStackMissingError: '
            f'{module} needs the full stack') in err, err
    assert 'make setup-full' in err and cause in err, err
    # it stops before mmdet / mmseg reach into mmcv.ops
    assert 'mmcv/ops' not in err, err


def test_dense_config_without_ops_names_setup_full():
    """mmengine turns an ImportError in custom_imports into a PYTHONPATH
    hint; ours must reach the user unchanged."""
    cfg = os.path.join(
        ROOT, 'configs', 'benchmarks', 'mmdet',
        'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py')
    err = _run_without_ops(
        BLOCK_MISSING,
        f'from mmengine.config import Config; Config.fromfile({cfg!r})')
    assert ('\nmmsiameseim.full_stack.FullStackMissingError: '
            'mmsiameseim.det needs the full stack') in err, err
    assert 'make setup-full' in err and 'PYTHONPATH' not in err, err


def test_missing_library_is_named():
    with pytest.raises(
            FullStackMissingError,
            match=r'no_such_dense_lib is not installed'
            r'[\s\S]*make setup-full'):
        require_full_stack('mmsiameseim.x', 'no_such_dense_lib')


def test_full_stack_passes_when_present():
    """The environment `make test` sets up has the ops, mmdet and mmseg."""
    require_full_stack('mmsiameseim.det', 'mmdet')
    require_full_stack('mmsiameseim.seg', 'mmseg')
