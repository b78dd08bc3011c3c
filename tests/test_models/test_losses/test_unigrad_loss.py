import itertools

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
    assert abs(float(got) -
               float(_reference(p, t))) < 1e-5 * float(_reference(p, t))


def test_lambda_and_gradient_only_to_prediction():
    p = torch.randn(2, 4, 8, requires_grad=True)
    t = torch.randn(2, 4, 8, requires_grad=True)
    loss = MODELS.build(dict(type='UniGradLoss', lambda_neg=0.5))(p, t)
    loss.backward()
    assert p.grad is not None and t.grad is None
    torch.testing.assert_close(
        loss,
        _reference(p.detach(), t.detach(), lam=0.5).float())


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
    torch.testing.assert_close(
        moco(p * scale + shift, t), moco(p, t), rtol=1e-4, atol=0)
    torch.testing.assert_close(
        moco(p, t * scale + shift), moco(p, t), rtol=1e-4, atol=0)
    y = F.normalize(
        F.batch_norm(p.reshape(-1, 16), None, None, training=True), dim=-1)
    z = F.normalize(
        F.batch_norm(t.reshape(-1, 16), None, None, training=True), dim=-1)
    ref = (((y - z)**2).sum(-1).mean() + 0.02 *
           ((y @ (z.T @ z / 12)) * y).sum(-1).mean()) / 16
    torch.testing.assert_close(moco(p, t), ref, rtol=1e-4, atol=0)
    # MAE-like: the prediction is used as it is, the target per token LN
    assert not torch.allclose(mae(p * 2, t), mae(p, t))
    torch.testing.assert_close(mae(p, t * 3 + 1), mae(p, t), rtol=1e-4, atol=0)


def _plain_loss(norm, **kw):
    return MODELS.build(
        dict(
            type='UniGradLoss', target_norm=norm, memory_efficient=False,
            **kw))


def _loss_and_grad(loss, pred, target):
    pred = pred.detach().clone().requires_grad_()
    out = loss(pred, target)
    out.backward()
    return out.detach(), pred.grad


@pytest.mark.parametrize('norm', ['mae-like', 'none'])
@pytest.mark.parametrize('shape,chunk', [((2, 6, 16), 2048), ((3, 49, 32), 50),
                                         ((4, 37, 24), 16), ((10, 48), 7)])
def test_chunked_path_matches_autograd_formula(norm, shape, chunk):
    torch.manual_seed(0)
    p, t = torch.randn(*shape), torch.randn(*shape) * 3 + 1
    fast = MODELS.build(
        dict(
            type='UniGradLoss',
            target_norm=norm,
            lambda_neg=0.3,
            chunk_rows=chunk))
    loss, grad = _loss_and_grad(fast, p, t)
    ref_loss, ref_grad = _loss_and_grad(
        _plain_loss(norm, lambda_neg=0.3), p, t)
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=0)
    # elementwise, relative to the gradient's scale (single entries cancel)
    torch.testing.assert_close(
        grad, ref_grad, rtol=1e-5, atol=1e-5 * float(ref_grad.abs().max()))
    # the 'mae-like' value equals the authors' diagonal form too
    if norm == 'mae-like':
        torch.testing.assert_close(
            loss,
            _reference(p.double(), t.double(), lam=0.3).float(),
            rtol=1e-5,
            atol=0)


@pytest.mark.parametrize('norm', ['mae-like', 'none'])
def test_chunked_path_bf16_inputs_match_autograd(norm):
    torch.manual_seed(0)
    p = torch.randn(3, 20, 32).bfloat16()
    t = (torch.randn(3, 20, 32) * 2).bfloat16()
    fast = MODELS.build(
        dict(type='UniGradLoss', target_norm=norm, chunk_rows=25))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        loss, grad = _loss_and_grad(fast, p, t)
        ref_loss, ref_grad = _loss_and_grad(_plain_loss(norm), p, t)
    assert loss.dtype == torch.float32 and grad.dtype == torch.bfloat16
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=0)
    # both fp32 gradients are rounded to bf16: equal up to that rounding
    torch.testing.assert_close(grad, ref_grad)
    rel = (grad.float() - ref_grad.float()).norm() / ref_grad.float().norm()
    assert rel < 2**-8


@pytest.mark.parametrize('norm', ['mae-like', 'none'])
def test_chunked_path_gradcheck_fp64(norm):
    torch.manual_seed(0)
    p = torch.randn(2, 5, 6, dtype=torch.float64, requires_grad=True)
    t = torch.randn(2, 5, 6, dtype=torch.float64)
    loss = MODELS.build(
        dict(
            type='UniGradLoss', target_norm=norm, lambda_neg=0.5,
            chunk_rows=3))
    assert torch.autograd.gradcheck(lambda x: loss(x, t), (p, ))


def test_chunked_path_scales_upstream_gradient_and_skips_target():
    torch.manual_seed(0)
    p = torch.randn(2, 6, 8, requires_grad=True)
    t = torch.randn(2, 6, 8, requires_grad=True)
    fast = MODELS.build(dict(type='UniGradLoss', chunk_rows=5))
    (3 * fast(p, t)).backward()
    assert t.grad is None
    _, ref_grad = _loss_and_grad(_plain_loss('mae-like'), p, t.detach())
    torch.testing.assert_close(p.grad, 3 * ref_grad, rtol=1e-5, atol=1e-9)
    # no gradient wanted: no buffer, same value
    with torch.no_grad():
        torch.testing.assert_close(
            fast(p, t), _plain_loss('mae-like')(p, t), rtol=1e-5, atol=0)


def test_chunk_rows_must_be_positive():
    with pytest.raises(ValueError, match='chunk_rows'):
        MODELS.build(dict(type='UniGradLoss', chunk_rows=0))


def test_chunk_sum_error_does_not_grow_with_the_number_of_products():
    """The loss sums > 1e6 products per chunk (2048 tokens x 768 channels):

    the sum must stay at float64 accuracy, not drift as fp32 accumulation over
    k terms does (a (1, k) @ (k, 1) matmul: ~5e-4 at k = 1e6).
    """
    from mmsiameseim.models.losses.unigrad_loss import _dot
    torch.manual_seed(0)
    for rows in (1400, 4096):  # k = 1.08e6 and 3.1e6
        a = torch.randn(rows, 768)
        b = torch.randn(rows, 768)
        for x, y in ((a, a), (a, b)):  # all-positive terms, and mixed
            want = (x.double() * y.double()).sum()
            scale = (x.double() * y.double()).abs().sum()
            got = _dot(x, y)
            assert got.dtype == torch.float64
            assert abs(float(got - want)) < 1e-7 * float(scale), rows


def test_correlation_is_the_one_the_loss_uses():
    """``correlation`` (exact accumulation) is the C of the loss's own
    target normalisation; passed as ``corr`` it gives the same loss, and
    the loss keeps no state from the call."""
    torch.manual_seed(0)
    pred, target = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    for norm, chunked in itertools.product(('mae-like', 'none'),
                                           (False, True)):
        loss = MODELS.build(
            dict(
                type='UniGradLoss',
                target_norm=norm,
                memory_efficient=chunked,
                chunk_rows=3))
        z = target.reshape(-1, 8)
        if norm == 'mae-like':
            z = F.layer_norm(z, (8, ), eps=loss.eps)
        torch.testing.assert_close(loss.correlation(target), z.T @ z / 10)
        expected = loss(pred, target)
        torch.testing.assert_close(
            loss(pred, target, corr=loss.correlation(target)), expected)
        other = torch.eye(8)  # another correlation gives another loss
        assert not torch.allclose(loss(pred, target, corr=other), expected)
        torch.testing.assert_close(loss(pred, target), expected)
    with pytest.raises(ValueError, match="target_norm='moco-like'"):
        MODELS.build(dict(type='UniGradLoss',
                          target_norm='moco-like')).correlation(target)
