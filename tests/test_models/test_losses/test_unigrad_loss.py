import pytest
import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401


def _reference(pred, target, lam=0.02):
    z = F.layer_norm(target, target.shape[-1:], eps=1e-5)
    y, z = pred.reshape(-1, pred.shape[-1]), z.reshape(-1, z.shape[-1])
    pos = ((y - z)**2).sum(-1).mean()
    corr = z.T @ z / z.shape[0]
    neg = torch.diagonal(y @ corr @ y.T).mean()  # the authors' form
    return (pos + lam * neg) / y.shape[-1]


def test_formula_matches_authors_form():
    torch.manual_seed(0)
    p = torch.randn(2, 6, 16, dtype=torch.float64)
    t = torch.randn(2, 6, 16, dtype=torch.float64) * 3 + 1
    head = MODELS.build(dict(type='UniGradHead'))
    got = head.loss(p.float(), t.float())
    assert abs(float(got) - float(_reference(p, t))) < 1e-5 * float(
        _reference(p, t))


def test_lambda_and_gradient_only_to_prediction():
    p = torch.randn(2, 4, 8, requires_grad=True)
    t = torch.randn(2, 4, 8, requires_grad=True)
    loss = MODELS.build(dict(type='UniGradLoss', lambda_neg=0.5))(p, t)
    loss.backward()
    assert p.grad is not None and t.grad is None
    torch.testing.assert_close(
        loss, _reference(p.detach(), t.detach(), lam=0.5).float())


def test_moco_like_normalises_both_sides():
    torch.manual_seed(0)
    p, t = torch.randn(2, 8, 16), torch.randn(2, 8, 16)
    loss = MODELS.build(dict(type='UniGradLoss', target_norm='moco-like'))
    y, z = loss._normalise(p.reshape(-1, 16), t.reshape(-1, 16))
    torch.testing.assert_close(y.norm(dim=-1), torch.ones(16))
    torch.testing.assert_close(z.norm(dim=-1), torch.ones(16))
    # scaling the prediction changes nothing once both sides are normalised
    torch.testing.assert_close(loss(p * 3, t), loss(p, t))


def test_unknown_norm_and_shape_mismatch_are_refused():
    with pytest.raises(ValueError, match='target_norm'):
        MODELS.build(dict(type='UniGradLoss', target_norm='l2'))
    head = MODELS.build(dict(type='UniGradHead'))
    with pytest.raises(ValueError, match='same shape'):
        head.loss(torch.zeros(1, 2, 4), torch.zeros(1, 3, 4))


def test_bf16_inputs_computed_in_fp32():
    p, t = torch.randn(2, 4, 8), torch.randn(2, 4, 8)
    head = MODELS.build(dict(type='UniGradHead'))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = head.loss(p.bfloat16(), t.bfloat16())
    assert out.dtype == torch.float32


def test_moco_like_normalises_both_sides_mae_like_only_the_target():
    torch.manual_seed(0)
    p, t = torch.randn(2, 6, 16), torch.randn(2, 6, 16)
    moco = MODELS.build(dict(type='UniGradLoss', target_norm='moco-like'))
    mae = MODELS.build(dict(type='UniGradLoss', target_norm='mae-like'))
    # BN (no affine) + l2 on both sides: scale and shift of either side
    # per channel do not matter (up to BN's eps)
    scale, shift = torch.rand(16) + 0.5, torch.randn(16)
    torch.testing.assert_close(moco(p * scale + shift, t), moco(p, t),
                               rtol=1e-4, atol=0)
    torch.testing.assert_close(moco(p, t * scale + shift), moco(p, t),
                               rtol=1e-4, atol=0)
    y = F.normalize(F.batch_norm(p.reshape(-1, 16), None, None,
                                 training=True), dim=-1)
    z = F.normalize(F.batch_norm(t.reshape(-1, 16), None, None,
                                 training=True), dim=-1)
    ref = (((y - z)**2).sum(-1).mean() +
           0.02 * ((y @ (z.T @ z / 12)) * y).sum(-1).mean()) / 16
    torch.testing.assert_close(moco(p, t), ref, rtol=1e-4, atol=0)
    # MAE-like: the prediction is used as it is, the target per token LN
    assert not torch.allclose(mae(p * 2, t), mae(p, t))
    torch.testing.assert_close(mae(p, t * 3 + 1), mae(p, t), rtol=1e-4,
                               atol=0)
