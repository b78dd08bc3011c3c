"""UniGradHead as the ``head`` of mmpretrain's MoCoV3, BYOL and SimSiam:

each algorithm calls ``head.loss`` on (B, C) embeddings and adds the
returned tensors; the total must be the UniGrad loss over the batch rows.
"""
import pytest
import torch
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import mmsiameseim  # noqa: F401
from .test_unigrad_head import unigrad_rows

DIMS = 32


def _mlp(in_channels, num_layers):
    return dict(
        type='NonLinearNeck',
        in_channels=in_channels,
        hid_channels=64,
        out_channels=DIMS,
        num_layers=num_layers,
        with_avg_pool=False)


def _model(algorithm):
    backbone = dict(
        type='VisionTransformer',
        img_size=16,
        patch_size=8,
        arch=dict(
            embed_dims=DIMS,
            num_layers=1,
            num_heads=2,
            feedforward_channels=64),
        out_type='cls_token')
    if algorithm == 'MoCoV3':
        backbone.update(type='MoCoV3ViT', stop_grad_conv1=True)
    cfg = dict(
        type=algorithm,
        backbone=backbone,
        neck=_mlp(DIMS, 2),
        head=dict(
            type='UniGradHead', loss_type='global', predictor=_mlp(DIMS, 2)))
    return MODELS.build(cfg)


# (algorithm, weight of the two symmetric terms, whether the target side is
# a momentum copy): MoCoV3 sums loss(q1, k2) + loss(q2, k1), BYOL doubles
# the sum, SimSiam halves it.
CASES = [('MoCoV3', 1.0), ('BYOL', 2.0), ('SimSiam', 0.5)]


@pytest.mark.parametrize('algorithm,weight', CASES)
def test_unigrad_head_inside_global_feature_algorithms(algorithm, weight):
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = _model(algorithm)
    model.init_weights()
    views = [torch.randn(6, 3, 16, 16) for _ in range(2)]
    losses = model.loss(views, [DataSample() for _ in range(6)])
    assert set(losses) == {'loss'} and losses['loss'].shape == ()

    # The first momentum update copies the online weights, so the target
    # side of this step is the online encoder without gradient.
    with torch.no_grad():
        online = [model.neck(model.backbone(v))[0] for v in views]
        pred = [model.head.predictor([o])[0] for o in online]
    expected = weight * (
        unigrad_rows(pred[0], online[1]) + unigrad_rows(pred[1], online[0]))
    torch.testing.assert_close(losses['loss'].detach(), expected)

    losses['loss'].backward()
    grads = [p.grad for p in model.backbone.layers.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)
