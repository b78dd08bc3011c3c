"""Every SiameseIM pretraining config decays exactly what the authors decay.

The authors group parameters with timm's ``param_groups_weight_decay``: no
weight decay for parameters with ndim <= 1 or a name ending in '.bias',
decay for everything else (cls token, mask token and the decoder position
MLP included); frozen parameters (fixed position embeddings, the frozen
patch embedding) are left out of the optimizer.
"""
import glob
import os

import pytest
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRETRAIN = os.path.join(ROOT, 'configs', 'pretrain')
VIT_B = os.path.join(PRETRAIN,
                     'siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py')
SIAMESEIM_CONFIGS = sorted(
    glob.glob(os.path.join(PRETRAIN, 'siameseim*.py')) +
    glob.glob(os.path.join(PRETRAIN, 'ablations', 'siameseim*.py')))
FASHIONMNIST = [c for c in SIAMESEIM_CONFIGS if 'fashionmnist' in c]


def authors_rule(name, param):
    """timm ``param_groups_weight_decay``: decayed or not."""
    return not (param.ndim <= 1 or name.endswith('.bias'))


def decay_by_name(cfg):
    """Build the model and its optimizer as the Runner does; return the
    model and {parameter name: weight decay} for the optimised ones."""
    init_default_scope('mmpretrain')
    model = MODELS.build(cfg.model)
    model.init_weights()
    wrapper_cfg = cfg.optim_wrapper.copy()
    # AmpOptimWrapper refuses CPUs; the parameter groups come from the
    # constructor, whatever the wrapper
    wrapper_cfg['type'] = 'OptimWrapper'
    wrapper_cfg.pop('loss_scale', None)
    wrapper_cfg.pop('dtype', None)
    optimizer = build_optim_wrapper(model, wrapper_cfg).optimizer
    default = optimizer.defaults['weight_decay']
    ids = {id(p): n for n, p in model.named_parameters()}
    decay = {}
    for group in optimizer.param_groups:
        for p in group['params']:
            decay[ids[id(p)]] = group.get('weight_decay', default)
    return model, decay


def check_authors_groups(model, decay, base_wd):
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert not frozen & set(decay), 'frozen parameters in the optimizer'
    for name, param in model.named_parameters():
        if name in frozen:
            continue
        want = base_wd if authors_rule(name, param) else 0.
        assert decay[name] == pytest.approx(want), name
    # the authors' own function groups the same tensors the same way
    from timm.optim import param_groups_weight_decay
    timm_groups = param_groups_weight_decay(model, weight_decay=base_wd)
    ids = {id(p): n for n, p in model.named_parameters()}
    timm_decay = {
        ids[id(p)]: g['weight_decay']
        for g in timm_groups
        for p in g['params']
    }
    assert timm_decay == pytest.approx(decay)
    return frozen


def test_vit_b_optimizer_decays_what_the_authors_decay():
    cfg = Config.fromfile(VIT_B)
    model, decay = decay_by_name(cfg)
    base_wd = cfg.optim_wrapper.optimizer.weight_decay
    assert base_wd == 0.05
    frozen = check_authors_groups(model, decay, base_wd)
    # the authors decay these (an earlier config exempted the tokens)
    for name in ('backbone.cls_token', 'neck.mask_token',
                 'neck.pos_mlp.weight'):
        assert decay[name] == base_wd, name
    assert decay['neck.pos_mlp.bias'] == 0.
    # the fixed sin-cos position embedding and the patch embedding are
    # frozen, and the momentum target is never optimised
    assert {
        'backbone.pos_embed', 'backbone.patch_embed.projection.weight',
        'backbone.patch_embed.projection.bias'
    } <= frozen
    assert not any(n.startswith('target.') for n in decay)
    assert len(decay) == sum(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize(
    'path',
    SIAMESEIM_CONFIGS,
    ids=[os.path.basename(c) for c in SIAMESEIM_CONFIGS])
def test_every_pretraining_config_uses_the_authors_groups(path):
    vit_b = Config.fromfile(VIT_B).optim_wrapper.paramwise_cfg
    assert Config.fromfile(path).optim_wrapper.paramwise_cfg == vit_b


@pytest.mark.parametrize(
    'path', FASHIONMNIST, ids=[os.path.basename(c) for c in FASHIONMNIST])
def test_fashionmnist_optimizer_decays_what_the_authors_decay(path):
    cfg = Config.fromfile(path)
    model, decay = decay_by_name(cfg)
    frozen = check_authors_groups(model, decay,
                                  cfg.optim_wrapper.optimizer.weight_decay)
    assert 'backbone.pos_embed' in frozen
