import pytest
import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401


def unigrad_rows(y, t, lam=0.02):
    """The UniGrad formula with one sample per row of (n, C) inputs and a
    MAE-like (LayerNorm) target."""
    z = F.layer_norm(t, t.shape[-1:], eps=1e-5)
    corr = z.T @ z / z.shape[0]
    pos = ((y - z)**2).sum(-1).mean()
    return (pos + lam * ((y @ corr) * y).sum(-1).mean()) / y.shape[-1]


def test_global_loss_is_the_loss_of_token_averages():
    torch.manual_seed(0)
    p, t = torch.randn(4, 9, 8), torch.randn(4, 9, 8)
    loss = dict(type='UniGradLoss', target_norm='moco-like')
    dense = MODELS.build(dict(type='UniGradHead', loss=loss))
    glob = MODELS.build(
        dict(type='UniGradHead', loss=loss, loss_type='global'))
    torch.testing.assert_close(
        glob.loss(p, t), dense.loss_module(p.mean(1), t.mean(1)))
    torch.testing.assert_close(dense.loss(p, t), dense.loss_module(p, t))
    assert not torch.allclose(glob.loss(p, t), dense.loss(p, t))


@pytest.mark.parametrize('loss_type', ['global', 'dense'])
def test_embeddings_rows_are_the_samples(loss_type):
    """(B, C) embeddings, as MoCoV3/BYOL/SimSiam pass them: one sample per
    row (the global head used to average over the channels instead)."""
    torch.manual_seed(0)
    y, t = torch.randn(16, 32), torch.randn(16, 32) * 2 + 1
    head = MODELS.build(dict(type='UniGradHead', loss_type=loss_type))
    got = head.loss(y, t)
    assert got.shape == ()
    torch.testing.assert_close(got, unigrad_rows(y, t))


def test_predictor_is_applied_to_the_prediction_only():
    torch.manual_seed(0)
    head = MODELS.build(
        dict(
            type='UniGradHead',
            loss_type='global',
            predictor=dict(
                type='NonLinearNeck',
                in_channels=8,
                hid_channels=16,
                out_channels=8,
                num_layers=2,
                with_avg_pool=False)))
    y = torch.randn(6, 8, requires_grad=True)
    t = torch.randn(6, 8)
    loss = head.loss(y, t)
    torch.testing.assert_close(loss, unigrad_rows(head.predictor([y])[0], t))
    loss.backward()
    assert y.grad is not None and all(p.grad is not None
                                      for p in head.predictor.parameters())


def test_bad_loss_type_and_shapes_are_refused():
    with pytest.raises(ValueError, match="'dense' or 'global'"):
        MODELS.build(dict(type='UniGradHead', loss_type='avg'))
    head = MODELS.build(dict(type='UniGradHead'))
    with pytest.raises(ValueError, match='same shape'):
        head.loss(torch.randn(2, 3, 4), torch.randn(2, 3, 5))
    glob = MODELS.build(dict(type='UniGradHead', loss_type='global'))
    for shape in [(8, ), (2, 3, 4, 5)]:
        for h in (head, glob):
            with pytest.raises(
                    ValueError, match=r'\(B, C\) embeddings or '
                    r'\(B, N, C\)'):
                h.loss(torch.randn(shape), torch.randn(shape))
