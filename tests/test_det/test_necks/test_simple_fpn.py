import pytest
import torch
from mmdet.registry import MODELS
from mmengine.registry import init_default_scope

import mmsiameseim.det  # noqa: F401


def test_five_levels_from_one_map():
    init_default_scope('mmdet')
    fpn = MODELS.build(
        dict(
            type='SimpleFPN',
            backbone_channel=32,
            in_channels=[8, 16, 32, 32],
            out_channels=16,
            num_outs=5,
            norm_cfg=dict(type='LN2d', eps=1e-6)))
    outs = fpn((torch.randn(2, 32, 8, 8), ))
    assert [tuple(o.shape[2:]) for o in outs] == [(32, 32), (16, 16), (8, 8),
                                                  (4, 4), (2, 2)]
    assert all(o.shape[:2] == (2, 16) for o in outs)
    assert type(fpn.lateral_convs[0].norm).__name__ == 'LN2d'


def test_wrong_channels_are_refused():
    from mmsiameseim.det.necks import SimpleFPN
    with pytest.raises(ValueError, match=r'in_channels must be \[8, 16'):
        SimpleFPN(32, [32, 32, 32, 32], 16, 5)
