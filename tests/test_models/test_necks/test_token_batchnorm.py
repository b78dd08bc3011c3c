import torch
import torch.nn as nn

from mmsiameseim.models import TokenBatchNorm


def test_matches_batchnorm1d_over_tokens():
    torch.manual_seed(0)
    x = torch.randn(3, 5, 8) * 2 + 1
    ours = TokenBatchNorm(8)
    ref = nn.BatchNorm1d(8)
    with torch.no_grad():
        ours.weight.uniform_()
        ref.weight.copy_(ours.weight)
    y = ours(x)
    y_ref = ref(x.permute(0, 2, 1)).permute(0, 2, 1)
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(ours.running_var, ref.running_var)
    ours.eval()
    ref.eval()
    torch.testing.assert_close(
        ours(x),
        ref(x.permute(0, 2, 1)).permute(0, 2, 1))


def test_runs_in_fp32_under_autocast():
    x = torch.randn(2, 4, 8)
    bn = TokenBatchNorm(8)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        y = bn(x.bfloat16())
    assert y.dtype == torch.float32


def test_registered_for_norm_cfg():
    from mmpretrain.models.utils import build_norm_layer
    bn = build_norm_layer(dict(type='TokenBN', sync=False), 8)
    assert isinstance(bn, TokenBatchNorm) and not bn.sync
