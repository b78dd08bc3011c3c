import argparse

import pytest
import torch
from mmpretrain.models import VisionTransformer

from projects.speed import (GemmStep, arch_settings, build_step, mae_model_cfg,
                            precision_context, siameseim_model_cfg)


def test_arch_sizes_are_mmpretrains():
    assert arch_settings('b') == VisionTransformer.arch_zoo['b']
    assert arch_settings('deit-t')['embed_dims'] == 192
    with pytest.raises(KeyError, match="unknown ViT arch 'q'"):
        arch_settings('q')


def test_model_configs_come_from_the_config_files():
    cfg = siameseim_model_cfg('deit-t', 64, target_size=32)
    # what the SiameseIM config file sets and the size does not change
    assert cfg['data_preprocessor']['type'] == 'EagerSelfSupDataPreprocessor'
    assert cfg['neck']['projector_depth'] == 2
    assert cfg['neck']['predictor_depth'] == 4
    assert cfg['head']['loss']['lambda_neg'] == 0.02
    # the size: deit-t is 192 wide (16 decoder heads: 192 % 16 == 0)
    assert cfg['backbone']['arch'] == 'deit-t'
    assert (cfg['neck']['embed_dims'], cfg['neck']['grid_size'],
            cfg['neck']['target_grid_size'],
            cfg['neck']['num_heads']) == (192, 4, 2, 16)
    mae = mae_model_cfg('deit-t', 64)
    assert mae['neck']['decoder_embed_dim'] == 512  # mmpretrain's config
    assert mae['neck']['num_patches'] == 16


def test_fp32_is_no_autocast():
    with precision_context('fp32', 'cpu'):
        assert not torch.is_autocast_enabled('cpu')
    with precision_context('bf16', 'cpu'):
        assert torch.get_autocast_dtype('cpu') == torch.bfloat16
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        precision_context('fp8', 'cpu')


def test_gemm_step_counts_2n3():
    gemm = GemmStep('bf16', 'cpu', n=64)
    assert gemm.a.dtype == torch.bfloat16
    assert gemm.flops() == 2 * 64**3 and gemm.step() > 0


def _tiny(**extra):
    return argparse.Namespace(
        arch='deit-t', img_size=32, batch=2, device='cpu', **extra)


def test_compiled_step_trains_like_the_eager_one():
    """--compile (here Dynamo only, backend 'eager', to stay fast): the
    same loss trajectory as the eager step on the same model and data."""
    eager = build_step('siameseim', 'fp32', _tiny())
    compiled = build_step('siameseim', 'fp32',
                          _tiny(compile=dict(backend='eager')))
    for bench in (eager, compiled):
        bench.step()
        bench.step()
    for a, b in zip(eager.model.parameters(), compiled.model.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
    assert eager.flops() == compiled.flops() > 0
