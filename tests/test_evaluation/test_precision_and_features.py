"""Precision switches that say what they do, and the pooling of backbone
outputs into one feature per image."""
import io

import pytest
import torch
from mmengine.config import Config

from mmsiameseim.evaluation import (autocast, pool_backbone_output,
                                    set_training_precision)


def test_float32_is_no_autocast_at_all(recwarn):
    with autocast('cpu', 'float32'):
        assert not torch.is_autocast_enabled('cpu')
        y = torch.ones(2, 2) @ torch.ones(2, 2)
    assert y.dtype == torch.float32
    with autocast('cpu', 'bfloat16'):
        assert torch.is_autocast_enabled('cpu')
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    assert not [w for w in recwarn if 'autocast' in str(w.message)]
    with pytest.raises(
            ValueError,
            match="precision='fp32': choose from "
            r"\['float32', 'bfloat16', 'float16'\]"):
        autocast('cpu', 'fp32')


def test_one_vocabulary_the_flags_map_into():
    """Configs and the API take mmengine's dtype names (AmpOptimWrapper's
    dtype=); the tools' short flags reach them through one function."""
    from mmsiameseim.precision import PRECISIONS, precision_from_flag
    assert list(PRECISIONS) == ['float32', 'bfloat16', 'float16']
    assert [precision_from_flag(f) for f in ('fp32', 'bf16', 'fp16')] == \
        list(PRECISIONS)
    with pytest.raises(
            ValueError, match=r"unknown 'float32' \(fp32, bf16, "
            r'fp16\)'):
        precision_from_flag('float32')


def test_bf16_flags_come_from_the_cpuinfo_flags_line(monkeypatch):
    from mmsiameseim import precision
    lines = {
        'model name\t: some cpu avx512_bf16-in-a-name\n'
        'flags\t\t: fpu sse avx512f\n': {},
        'flags\t\t: fpu avx512_bf16\n':
        dict(avx512_bf16=True),
        'flags\t\t: fpu amx_bf16 avx512_bf16\n':
        dict(avx512_bf16=True, amx_bf16=True),
        '': {},
    }
    real_open = open
    for text, present in lines.items():

        def fake_open(path, *args, text=text, **kwargs):
            if path == '/proc/cpuinfo':
                return io.StringIO(text)
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr('builtins.open', fake_open)
        flags = precision.cpu_bf16_flags()
        assert flags == dict(avx512_bf16=False, amx_bf16=False) | present
        assert precision.native_bf16() == bool(present)


def test_training_precision_switches_the_optim_wrapper():
    from mmsiameseim.precision import training_precision
    cfg = Config(
        dict(
            optim_wrapper=dict(
                type='AutocastOptimWrapper',
                dtype='bfloat16',
                optimizer=dict(type='AdamW', lr=1e-3),
                clip_grad=dict(max_norm=1.))))
    assert training_precision(cfg.optim_wrapper) == 'bfloat16'
    set_training_precision(cfg, 'float32')
    assert cfg.optim_wrapper == dict(
        type='OptimWrapper',
        optimizer=dict(type='AdamW', lr=1e-3),
        clip_grad=dict(max_norm=1.))
    assert training_precision(cfg.optim_wrapper) == 'float32'
    set_training_precision(cfg, 'bfloat16')
    assert (cfg.optim_wrapper.type, cfg.optim_wrapper.dtype) == \
        ('AutocastOptimWrapper', 'bfloat16')
    with pytest.raises(ValueError, match="precision='bf16'"):
        set_training_precision(cfg, 'bf16')
    # mmengine's CUDA-only AMP wrapper becomes a CPU-ready one (the
    # precision key's route), its loss scaling dropped
    cfg.optim_wrapper.update(type='AmpOptimWrapper', loss_scale='dynamic')
    set_training_precision(cfg, 'float32')
    assert cfg.optim_wrapper == dict(
        type='OptimWrapper',
        optimizer=dict(type='AdamW', lr=1e-3),
        clip_grad=dict(max_norm=1.))
    cfg.optim_wrapper.type = 'ApexOptimWrapper'
    with pytest.raises(ValueError, match='ApexOptimWrapper'):
        set_training_precision(cfg, 'float32')


def test_plain_optim_wrapper_builds_and_steps():
    from mmengine.optim import OptimWrapper, build_optim_wrapper
    model = torch.nn.Linear(3, 2)
    cfg = Config(
        dict(
            optim_wrapper=dict(
                type='AutocastOptimWrapper',
                dtype='bfloat16',
                optimizer=dict(type='SGD', lr=0.1))))
    set_training_precision(cfg, 'float32')
    wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    assert type(wrapper) is OptimWrapper
    with wrapper.optim_context(model):
        out = model(torch.ones(1, 3))
    assert out.dtype == torch.float32


def test_backbone_outputs_pool_to_one_vector_per_image():
    tokens = torch.arange(24.).reshape(2, 3, 4)  # (N, 1 + L, C)
    assert torch.equal(pool_backbone_output(tokens), tokens[:, 0])
    fmap = torch.ones(2, 5, 3, 3)
    assert pool_backbone_output((fmap * 0, fmap)).shape == (2, 5)
    assert torch.equal(pool_backbone_output((tokens[:, 0], )), tokens[:, 0])
    # a ViT's token map (out_type='featmap') is flattened, not averaged
    fmap = torch.arange(2 * 5 * 9.).reshape(2, 5, 3, 3)
    assert torch.equal(
        pool_backbone_output(fmap, flatten_maps=True), fmap.reshape(2, 45))


def test_token_features_match_what_the_probe_backbone_gives():
    from mmpretrain.models import VisionTransformer

    from mmsiameseim.evaluation import pool_tokens
    kw = dict(arch='deit-tiny', img_size=32, patch_size=8, final_norm=False)
    raw = VisionTransformer(out_type='raw', **kw)
    fmap = VisionTransformer(out_type='featmap', **kw)
    fmap.load_state_dict(raw.state_dict())
    raw.eval()  # (VisionTransformer.train returns None: no chaining)
    fmap.eval()
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        tokens, flat = raw(x)[-1], pool_backbone_output(fmap(x), True)
    ours = pool_tokens(tokens, 'featmap')
    assert ours.shape == flat.shape == (3, 16 * 192)
    # the same values in another order: equal norms and cosines
    assert torch.allclose(ours.norm(dim=1), flat.norm(dim=1))
    assert torch.allclose(ours @ ours.T, flat @ flat.T, rtol=1e-4)
    with pytest.raises(ValueError, match="'featmap'"):
        pool_tokens(tokens, 'mean')


def test_fp32_fashionmnist_config_is_the_bf16_one_with_a_plain_wrapper():
    import os
    root = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    name = 'siameseim_vit-tiny-p4_1xb64-{}-coslr-1e_fashionmnist.py'
    fp32, bf16 = (
        Config.fromfile(
            os.path.join(root, 'configs', 'pretrain', name.format(p)))
        for p in ('fp32', 'bf16'))
    assert fp32.optim_wrapper.type == 'OptimWrapper'
    set_training_precision(bf16, 'float32')
    assert fp32.to_dict() == bf16.to_dict()
