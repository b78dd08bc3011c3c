import torch
from torch import nn

from mmsiameseim.det.layers import LN2d


def test_ln2d_normalises_channels_like_layernorm():
    x = torch.randn(2, 6, 5, 4)
    ln2d, ln = LN2d(6), nn.LayerNorm(6, eps=1e-6)
    ln2d.weight.data.normal_()
    ln.load_state_dict(ln2d.state_dict())
    expected = ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
    assert torch.allclose(ln2d(x), expected, atol=1e-6)
