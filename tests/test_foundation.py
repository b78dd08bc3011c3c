"""The plugin installs, registers and sits on a working OpenMMLab stack."""
import os

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_registers_into_mmpretrain():
    from mmpretrain.registry import HOOKS, MODELS, TRANSFORMS

    import mmsiameseim
    assert mmsiameseim.__version__
    for name in ('SiameseIM', 'SiameseIMViT', 'RelPosDecoderNeck',
                 'UniGradHead', 'UniGradLoss', 'TokenBN', 'MomentumTarget'):
        assert MODELS.get(name) is not None, name
    for name in ('TwoViewRandomResizedCrop', 'PerViewTransforms',
                 'BlockwiseMaskGenerator'):
        assert TRANSFORMS.get(name) is not None, name
    assert HOOKS.get('StopOnNonFiniteLossHook') is not None


def test_mmcv_ops_work():
    from mmcv.ops import nms, roi_align
    boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.],
                          [20., 20., 30., 30.]])
    scores = torch.tensor([0.9, 0.8, 0.7])
    _, keep = nms(boxes, scores, iou_threshold=0.5)
    assert keep.tolist() == [0, 2]
    feats = torch.arange(16.).reshape(1, 1, 4, 4)
    rois = torch.tensor([[0., 0., 0., 4., 4.]])
    out = roi_align(feats, rois, (2, 2), 1.0, 2, 'avg', True)
    assert out.shape == (1, 1, 2, 2)
    torch.testing.assert_close(out[0, 0],
                               torch.tensor([[2.5, 4.5], [10.5, 12.5]]))


def test_mmdet_and_mmseg_models_import():
    import mmdet.models  # noqa: F401
    import mmseg.models  # noqa: F401
    from mmdet.registry import MODELS as DET
    from mmseg.registry import MODELS as SEG
    assert DET.get('MaskRCNN') is not None
    assert SEG.get('UPerHead') is not None


def test_mmpretrain_side_works_without_mmdet_or_mmseg():
    """mmpretrain may import mmdet itself when it is installed; our
    mmpretrain side must not need it."""
    import subprocess
    import sys
    code = ('import sys; sys.modules["mmdet"] = None; '
            'sys.modules["mmseg"] = None; import mmsiameseim; '
            'from mmpretrain.registry import MODELS; '
            'print(MODELS.get("SiameseIM").__name__)')
    out = subprocess.run([sys.executable, '-c', code],
                         capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-1500:]
    assert out.stdout.strip().endswith('SiameseIM')
    pkg = os.path.join(ROOT, 'mmsiameseim')
    for dirpath, _, files in os.walk(pkg):
        rel = os.path.relpath(dirpath, pkg).split(os.sep)[0]
        if rel in ('det', 'seg'):
            continue
        for f in files:
            if f.endswith('.py'):
                text = open(os.path.join(dirpath, f)).read()
                assert 'import mmdet' not in text and 'from mmdet' not in text
                assert 'import mmseg' not in text and 'from mmseg' not in text


def test_import_loads_the_plugin_and_nothing_of_the_projects():
    """``import mmsiameseim`` (every config's ``custom_imports``) loads the
    registered components only: nothing of ``projects`` (demo, Table 3,
    benchmark harness, plots) nor the stand-in data painters, no plotting or
    scikit-learn, and not the mmdet / mmseg sides. What mmpretrain itself
    loads is imported first and not counted."""
    import subprocess
    import sys
    code = ('import sys, json\n'
            'import mmpretrain.datasets, mmpretrain.engine, '
            'mmpretrain.evaluation, mmpretrain.models, mmpretrain.structures\n'
            'before = set(sys.modules)\n'
            'import mmsiameseim\n'
            'print(json.dumps(sorted(set(sys.modules) - before)))\n')
    out = subprocess.run([sys.executable, '-W', 'ignore', '-c', code],
                         capture_output=True,
                         text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr[-1500:]
    import json
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert 'mmsiameseim.models.algorithms.siameseim' in loaded
    forbidden = ('projects', 'mmsiameseim.testing', 'mmsiameseim.det',
                 'mmsiameseim.seg', 'benchmark', 'matplotlib', 'sklearn',
                 'pandas', 'mmdet', 'mmseg', 'timm', 'visualization')
    wrong = [
        m for m in loaded
        if any(part in forbidden
               for part in m.split('.')) or m.split('.')[0] in forbidden
        or '.'.join(m.split('.')[:2]) in forbidden
    ]
    assert not wrong, wrong


@pytest.mark.parametrize('name', [
    'siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py',
    'siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py',
    'siameseim_vit-large-p16_16xb256-amp-coslr-1600e_in1k.py',
])
def test_configs_load_with_custom_imports(name):
    from mmengine.config import Config
    cfg = Config.fromfile(os.path.join(ROOT, 'configs', 'pretrain', name))
    assert cfg.custom_imports == dict(
        imports=['mmsiameseim'], allow_failed_imports=False)
    assert cfg.model.type == 'SiameseIM'
