"""What a preflight checks in a built runner: every trainable parameter
gets a gradient (finite, and for the encoder one that is not identically
zero), every optimizer group gets the lr and weight decay its
config intends, the loss is finite."""
import math
import re
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn

# Constructors that scale the lr by depth (mmpretrain, mmsiameseim.det,
# mmseg) and the paramwise_cfg key of their per-block rate.
LAYER_DECAY = {
    'LearningRateDecayOptimWrapperConstructor': 'layer_decay_rate',
    'ViTLayerDecayOptimWrapperConstructor': 'decay_rate',
    'LayerDecayOptimizerConstructor': 'layer_decay_rate',
}
NORMS = (nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._NormBase)
BLOCK = re.compile(r'^backbone\.(?:layers|blocks)\.(\d+)\.')
EMBEDDINGS = ('backbone.patch_embed', 'backbone.pos_embed',
              'backbone.cls_token')
TOLERANCE = 1e-6
#: the encoder: the backbone, and SiameseIM's projector (the target branch
#: averages both)
ENCODER = ('backbone.', 'neck.projector.')


def is_encoder_param(name: str) -> bool:
    """Whether parameter ``name`` (of the runner's model, a DDP wrapper's
    ``module.`` prefix allowed) belongs to the encoder."""
    return name.removeprefix('module.').startswith(ENCODER)


def gradient_problems(hook) -> Tuple[Dict[str, List[str]], List[str]]:
    """What a preflight's gradients show (``PreflightHook``: the trainable
    parameters, those that got a gradient, a non-zero one, a non-finite
    one): the names for its record, and its failures.

    A trainable parameter fails with no gradient or a non-finite one. An
    encoder parameter (:func:`is_encoder_param`) whose gradient is
    identically zero at every step never moves: that fails for a weight
    (2-D or more), and when every encoder parameter is so (the encoder cut
    off from the loss). A bias or norm parameter may be zero by an
    invariance of the model (MoCo-v3's last FFN bias: the BatchNorm of its
    projector removes a shift common to every image): it is recorded, not
    failed. Other parts (a detector's mask head on a batch with no
    positives) may get zeros in a few steps and are not checked.
    """
    missing = [n for n in hook.trainable if n not in hook.with_grad]
    encoder = [n for n in hook.trainable if is_encoder_param(n)]
    still = [
        n for n in encoder if n in hook.with_grad and n not in hook.moving
        and n not in hook.nonfinite
    ]
    ndim = getattr(hook, 'ndim', {})
    failing = still if encoder and len(still) == len(encoder) else [
        n for n in still if ndim.get(n, 2) >= 2
    ]
    bad = [n for n in hook.trainable if n in hook.nonfinite]
    failures = []
    for names, what in ((missing, 'received no gradient'), (
            failing, 'are encoder parameters whose gradient is identically '
            'zero at every step, so they never move'),
                        (bad, 'got a non-finite gradient')):
        if names:
            failures.append(f'{len(names)} trainable parameters {what}: '
                            f'{names[:10]}')
    return dict(
        params_without_grad=missing,
        encoder_params_with_zero_grad=still,
        params_with_nonfinite_grad=bad), failures


def norm_param_names(model: nn.Module) -> set:
    """Names of the parameters of normalisation layers (LayerNorm,
    GroupNorm, BatchNorm and their subclasses: LN2d, TokenBN, ...)."""
    return {
        f'{m_name}.{p_name}' if m_name else p_name
        for m_name, m in model.named_modules() if isinstance(m, NORMS)
        for p_name, _ in m.named_parameters(recurse=False)
    }


def param_groups(
    model: nn.Module, optimizer: torch.optim.Optimizer
) -> Tuple[Dict[str, dict], List[str], List[str]]:
    """{name: {'lr', 'weight_decay'}} of every trainable parameter in an
    optimizer group (lr: the group's ``initial_lr`` when a scheduler set
    one, i.e. the lr before warm-up), the problems of the grouping itself
    (trainable parameters in no group or in two), and the frozen parameters
    found in groups (harmless: no gradient, no update)."""
    names = {id(p): n for n, p in model.named_parameters()}
    found, problems, frozen = {}, [], []
    for group in optimizer.param_groups:
        lr = group.get('initial_lr', group['lr'])
        for p in group['params']:
            name = names.get(id(p), f'<unnamed {tuple(p.shape)}>')
            if name in found:
                problems.append(f'{name} is in two optimizer groups')
            if not p.requires_grad:
                # mmengine's constructor keeps frozen parameters in a group
                # when there are no paramwise settings; they get no
                # gradient, and the optimizers skip them
                frozen.append(name)
                continue
            found[name] = dict(
                lr=lr, weight_decay=group.get('weight_decay', 0.), ndim=p.ndim)
    missing = [
        n for n, p in model.named_parameters()
        if p.requires_grad and n not in found
    ]
    problems += [
        f'{n} is trainable but in no optimizer group' for n in missing
    ]
    return found, problems, frozen


def depth(name: str, num_layers: int) -> int:
    """ViT depth of a parameter for layer decay: embeddings 0, block i
    i + 1, everything else (final norm, neck, heads) num_layers + 1."""
    if name.startswith(EMBEDDINGS):
        return 0
    match = BLOCK.match(name)
    return int(match.group(1)) + 1 if match else num_layers + 1


def _custom(name: str, custom_keys: dict) -> dict:
    keys = sorted(sorted(custom_keys), key=len, reverse=True)
    key = next((k for k in keys if k in name), None)
    return custom_keys[key] if key is not None else {}


def expected_decay(name: str, ndim: int, is_norm: bool, base_wd: float,
                   constructor: str, paramwise: dict) -> float:
    """The weight decay a parameter should get, by the recipe each
    constructor implements.

    - mmpretrain's ``LearningRateDecayOptimWrapperConstructor`` (MAE / BEiT
      fine-tuning): none for norms, biases, 1-D parameters, the position
      embedding and the cls token.
    - ``ViTLayerDecayOptimWrapperConstructor`` (ViTDet, detectron2's rule):
      none for normalisation layers (``norm_decay_mult``, default 0) and
      names containing one of ``no_decay_names`` (default ``pos_embed``);
      biases are decayed, as in ViTDet.
    - mmseg's ``LayerDecayOptimizerConstructor`` (BEiT's segmentation
      recipe): none for 1-D parameters and biases (its name test for
      ``pos_embed`` / ``cls_token`` compares the full name
      ``backbone.pos_embed`` with ``'pos_embed'`` and never matches, as in
      BEiT's code: they are decayed; :func:`check_param_groups` notes it).
    - The default constructor: the config's multipliers
      (``bias_decay_mult``, ``flat_decay_mult``, ``norm_decay_mult``,
      ``custom_keys`` ``decay_mult``), i.e. for the pretraining configs
      timm's rule, no decay exactly for 1-D parameters and biases.
    """
    if constructor == 'LearningRateDecayOptimWrapperConstructor':
        no_decay = (
            is_norm or ndim <= 1 or name.endswith('.bias')
            or 'pos_embed' in name or 'cls_token' in name)
        return 0. if no_decay else base_wd
    if constructor == 'ViTLayerDecayOptimWrapperConstructor':
        if any(
                n in name
                for n in paramwise.get('no_decay_names', ('pos_embed', ))):
            return 0.
        return base_wd * paramwise.get('norm_decay_mult',
                                       0.) if is_norm else base_wd
    if constructor == 'LayerDecayOptimizerConstructor':
        return 0. if ndim <= 1 or name.endswith('.bias') else base_wd
    mult = 1.
    custom = _custom(name, paramwise.get('custom_keys', {}))
    if 'decay_mult' in custom:
        mult = custom['decay_mult']
    elif name.endswith('.bias') and 'bias_decay_mult' in paramwise:
        mult = paramwise['bias_decay_mult']
    elif is_norm and 'norm_decay_mult' in paramwise:
        mult = paramwise['norm_decay_mult']
    elif ndim == 1 and 'flat_decay_mult' in paramwise:
        mult = paramwise['flat_decay_mult']
    return base_wd * mult


def check_param_groups(model: nn.Module, optimizer: torch.optim.Optimizer,
                       optim_cfg: dict) -> Tuple[List[str], dict]:
    """Problems with the optimizer groups (empty: as intended) and a
    summary (groups, lr scales by depth, no-decay count).

    Args:
        model (nn.Module): The runner's model.
        optimizer (Optimizer): The optimizer the config's constructor built.
        optim_cfg (dict): The config's ``optim_wrapper``.
    """
    constructor = optim_cfg.get('constructor',
                                'DefaultOptimWrapperConstructor')
    paramwise = dict(optim_cfg.get('paramwise_cfg') or {})
    base_lr = optim_cfg['optimizer']['lr']
    base_wd = optim_cfg['optimizer'].get('weight_decay', 0.) or 0.
    found, problems, frozen = param_groups(model, optimizer)
    norms = norm_param_names(model)
    for name, g in found.items():
        want = expected_decay(name, g['ndim'], name in norms, base_wd,
                              constructor, paramwise)
        if abs(g['weight_decay'] - want) > TOLERANCE * max(1., base_wd):
            problems.append(f'{name}: weight decay {g["weight_decay"]:g}, '
                            f'expected {want:g} ({constructor})')
    decayed_embeddings = [
        n for n, g in found.items()
        if g['weight_decay'] > 0 and ('pos_embed' in n or 'cls_token' in n)
    ]
    scales = {n: g['lr'] / base_lr for n, g in found.items()}
    summary = dict(
        constructor=constructor,
        groups=len(optimizer.param_groups),
        no_decay=sum(1 for g in found.values() if g['weight_decay'] == 0),
        decayed=sum(1 for g in found.values() if g['weight_decay'] > 0),
        frozen_in_optimizer=len(frozen),
        decayed_embeddings=decayed_embeddings)
    if constructor in LAYER_DECAY:
        rate = paramwise.get(LAYER_DECAY[constructor])
        layers = paramwise.get('num_layers') or 1 + max(
            (depth(n, 10**6) - 1 for n in found if BLOCK.match(n)), default=-1)
        by_depth = {}
        for n, s in scales.items():
            by_depth.setdefault(depth(n, layers), set()).add(round(s, 9))
        problems += layer_decay_problems(by_depth, rate, layers)
        summary['lr_scale_by_depth'] = {
            d: sorted(s)
            for d, s in sorted(by_depth.items())
        }
    else:
        lr_mults = {
            n: _custom(n, paramwise.get('custom_keys', {})).get('lr_mult', 1.)
            for n in found
        }
        for n, s in scales.items():
            if abs(s - lr_mults[n]) > TOLERANCE:
                problems.append(f'{n}: lr scale {s:g}, expected '
                                f'{lr_mults[n]:g}')
        summary['lr_scales'] = sorted({round(s, 9) for s in scales.values()})
    return problems, summary


def layer_decay_problems(by_depth: Dict[int, set], rate: Optional[float],
                         num_layers: int) -> List[str]:
    """Each depth one lr scale, ``rate ** (num_layers + 1 - depth)``:
    monotone by depth, 1 for the neck and heads."""
    problems = []
    for d, s in sorted(by_depth.items()):
        if len(s) > 1:
            problems.append(f'layer decay: depth {d} has several lr scales '
                            f'{sorted(s)}')
        if rate is not None:
            want = rate**(num_layers + 1 - d)
            if any(abs(v - want) > 1e-6 * max(want, 1e-12) + 1e-12 for v in s):
                problems.append(f'layer decay: depth {d} lr scale '
                                f'{sorted(s)}, expected {rate}^'
                                f'{num_layers + 1 - d} = {want:.4g}')
    depths = sorted(by_depth)
    for a, b in zip(depths, depths[1:]):
        if max(by_depth[a]) > min(by_depth[b]) + 1e-12:
            problems.append(f'layer decay not monotone: depth {a} has lr '
                            f'scale {max(by_depth[a]):.4g} > depth {b} '
                            f'{min(by_depth[b]):.4g}')
    return problems


def finite(values: Dict[str, float]) -> List[str]:
    """Names of the non-finite values."""
    return [k for k, v in values.items() if not math.isfinite(v)]
