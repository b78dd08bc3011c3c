import torch
import torch.nn.functional as F
from mmpretrain.models.utils.attention import MultiheadAttention
from mmpretrain.registry import MODELS

from mmsiameseim.models import (fp32_attention_under_cpu_autocast,
                                use_fp32_attention_under_cpu_autocast)
from tests.helpers import random_batch, tiny_siameseim_cfg


def _qkv(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(2, 4, 9, 8, generator=g).to(dtype) for _ in range(3)]


def test_same_as_torch_without_autocast():
    q, k, v = _qkv()
    assert torch.equal(
        fp32_attention_under_cpu_autocast(q, k, v),
        F.scaled_dot_product_attention(q, k, v))


def test_runs_in_fp32_under_cpu_bf16_autocast():
    q, k, v = _qkv(torch.bfloat16)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = fp32_attention_under_cpu_autocast(q, k, v)
    assert out.dtype == torch.bfloat16
    expected = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    assert torch.equal(out, expected.to(torch.bfloat16))


def test_gradients_flow_in_the_input_dtype():
    q, k, v = [t.requires_grad_() for t in _qkv(torch.bfloat16)]
    with torch.autocast('cpu', dtype=torch.bfloat16):
        fp32_attention_under_cpu_autocast(q, k, v).float().sum().backward()
    assert all(t.grad is not None and t.grad.dtype == torch.bfloat16
               for t in (q, k, v))


def test_every_attention_of_siameseim_uses_it():
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    attns = [m for m in model.modules() if isinstance(m, MultiheadAttention)]
    # online backbone 2 + projector 1 + predictor 1, and the target's copies
    assert len(attns) == 2 * (2 + 1) + 1
    assert all(
        m.scaled_dot_product_attention is fp32_attention_under_cpu_autocast
        for m in attns)


def test_bf16_step_matches_fp32_step_closely():
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    views, samples = random_batch(4)
    with torch.no_grad():
        fp32 = model.loss(views, samples, update_target=False)['loss']
        with torch.autocast('cpu', dtype=torch.bfloat16):
            bf16 = model.loss(views, samples, update_target=False)['loss']
    assert torch.isfinite(bf16)
    assert abs(bf16.item() - fp32.item()) < 0.05 * abs(fp32.item())


def test_helper_returns_the_module_and_leaves_others_alone():
    layer = torch.nn.Linear(2, 2)
    assert use_fp32_attention_under_cpu_autocast(layer) is layer
    attn = MultiheadAttention(embed_dims=8, num_heads=2)
    use_fp32_attention_under_cpu_autocast(attn)
    assert attn.scaled_dot_product_attention is \
        fp32_attention_under_cpu_autocast
