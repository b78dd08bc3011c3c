"""The miniature detection configs change one thing that size alone does
not explain: SimpleFPN's norm is GroupNorm, not ViTDet's LN2d. Only the
neck's: the heads keep LN2d, and the benchmark configs keep it everywhere."""
import glob
import os

import pytest
from torch import nn

from mmsiameseim.det.layers import LN2d
from tests.test_det.helpers import ROOT, build_detector

MINIATURE = sorted(
    glob.glob(
        os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet', 'miniature',
                     '*.py')))


@pytest.mark.parametrize(
    'config', MINIATURE, ids=[os.path.basename(c) for c in MINIATURE])
def test_only_the_miniature_neck_norm_is_group_norm(config):
    cfg, model = build_detector(config)
    # _delete_ drops LN2d's eps instead of handing it to GroupNorm
    assert cfg.model.neck.norm_cfg == dict(
        type='GN', num_groups=32, requires_grad=True)
    assert cfg.model.roi_head.bbox_head.norm_cfg.type == 'LN2d'
    assert cfg.model.roi_head.mask_head.norm_cfg.type == 'LN2d'
    neck_norms = [
        m for m in model.neck.modules()
        if isinstance(m, (nn.GroupNorm, nn.LayerNorm))
    ]
    # one inside the x4 branch, one after each 1x1 and 3x3 conv of 4 levels
    assert len(neck_norms) == 9
    assert all(type(m) is nn.GroupNorm for m in neck_norms)
    assert all(m.num_groups == 32 for m in neck_norms)
    assert any(isinstance(m, LN2d) for m in model.roi_head.modules())
