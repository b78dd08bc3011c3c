"""The "Fail to import MultiScaleDeformableAttention" warning of mmcv-lite
at import stays out of ``import mmsiameseim``; other warnings do not."""
import subprocess
import sys

from tests.helpers import ROOT

# mmcv-lite has no mmcv.ops.multi_scale_deform_attn: a None entry in
# sys.modules makes its import fail as it does there, whichever mmcv is
# installed
LITE = "import sys; sys.modules['mmcv.ops.multi_scale_deform_attn'] = None\n"


def _stderr(code: str) -> str:
    run = subprocess.run([sys.executable, '-W', 'default', '-c', LITE + code],
                         cwd=ROOT,
                         capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stderr


def test_mmcv_lite_warns_without_the_plugin():
    """The simulation reproduces mmcv-lite's warning."""
    assert 'Fail to import ``MultiScaleDeformableAttention``' in _stderr(
        'import mmcv.cnn.bricks.transformer')


def test_the_plugin_import_is_quiet_about_it_and_keeps_other_warnings():
    err = _stderr('import mmsiameseim\n'
                  'import mmpretrain.models\n'
                  'import warnings; warnings.warn("still shown")')
    assert 'MultiScaleDeformableAttention' not in err
    assert 'still shown' in err
