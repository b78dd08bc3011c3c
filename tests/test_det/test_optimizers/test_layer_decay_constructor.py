import pytest
import torch
from torch import nn

from mmsiameseim.det.optimizers import ViTLayerDecayOptimWrapperConstructor
from tests.test_det.helpers import tiny_vit


class Detector(nn.Module):

    def __init__(self):
        super().__init__()
        self.backbone = tiny_vit()
        self.neck = nn.Sequential(nn.Conv2d(32, 8, 1), nn.GroupNorm(2, 8))


def build(num_layers=4, decay_rate=0.7):
    cfg = dict(
        type='OptimWrapper',
        optimizer=dict(
            type='AdamW', lr=1e-4, weight_decay=0.1, betas=(0.9, 0.999)))
    constructor = ViTLayerDecayOptimWrapperConstructor(
        cfg, dict(decay_rate=decay_rate, num_layers=num_layers))
    return constructor(Detector())


def settings(wrapper):
    return {
        name: (g['lr'], g['weight_decay'])
        for g in wrapper.optimizer.param_groups
        for name in g['names']
    }


def test_lr_scales_follow_depth():
    s = settings(build())
    lr = 1e-4
    assert s['backbone.patch_embed.projection.weight'][0] == pytest.approx(
        lr * 0.7**5)
    assert s['backbone.pos_embed'][0] == pytest.approx(lr * 0.7**5)
    assert s['backbone.layers.0.attn.qkv.weight'][0] == pytest.approx(lr *
                                                                      0.7**4)
    assert s['backbone.layers.3.ffn.layers.1.weight'][0] == pytest.approx(lr *
                                                                          0.7)
    assert s['neck.0.weight'][0] == pytest.approx(lr)


def test_no_weight_decay_on_norms_and_pos_embed_only():
    s = settings(build())
    assert s['backbone.pos_embed'][1] == 0
    assert s['backbone.layers.1.ln1.weight'][1] == 0
    assert s['backbone.layers.1.ln2.bias'][1] == 0
    assert s['neck.1.weight'][1] == 0
    # as ViTDet: other biases and the relative position tables decay
    assert s['backbone.layers.1.attn.qkv.bias'][1] == pytest.approx(0.1)
    assert s['backbone.layers.1.attn.rel_pos_h'][1] == pytest.approx(0.1)
    assert s['neck.0.weight'][1] == pytest.approx(0.1)
    n_params = sum(1 for _ in Detector().parameters())
    assert len(s) == n_params


def test_vit_b_first_block_scale_and_bad_num_layers():
    from mmsiameseim.det.optimizers.layer_decay_constructor import vit_layer_id
    assert 0.7**(12 + 1 - vit_layer_id('backbone.layers.0.ln1.weight', 12)) \
        == pytest.approx(0.7**12)
    with pytest.raises(ValueError, match='num_layers=2'):
        build(num_layers=2)
    with pytest.raises(KeyError, match='num_layers'):
        cfg = dict(type='OptimWrapper', optimizer=dict(type='AdamW', lr=1.))
        ViTLayerDecayOptimWrapperConstructor(cfg, dict(decay_rate=0.7))(
            Detector())


def test_scheduler_keeps_the_ratios():
    wrapper = build()
    from mmengine.optim import LinearLR
    sched = LinearLR(wrapper, start_factor=0.001, by_epoch=False, end=250)
    lrs = [g['lr'] for g in wrapper.optimizer.param_groups]
    first = [g['initial_lr'] for g in wrapper.optimizer.param_groups]
    assert lrs == pytest.approx([0.001 * v for v in first])
    assert isinstance(sched, LinearLR) and torch.is_tensor(
        wrapper.optimizer.param_groups[0]['params'][0])
