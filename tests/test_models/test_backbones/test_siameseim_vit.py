"""SiameseIMViT takes mmpretrain VisionTransformer's archs and options and
gives the same weights and (without a mask) the same output."""
import pytest
import torch
from mmpretrain.models import VisionTransformer
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401
from mmsiameseim.models import SiameseIMViT

# one name per distinct arch of VisionTransformer.arch_zoo
ARCHS = sorted({
    id(v): k
    for k, v in VisionTransformer.arch_zoo.items()
}.values())


def _state_shapes(module):
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


@pytest.mark.parametrize('arch', ARCHS)
def test_every_vit_arch_has_vision_transformer_weights(arch):
    """Full-size archs, built on the meta device (no memory, no time)."""
    with torch.device('meta'):
        ours = SiameseIMViT(arch=arch, img_size=32, patch_size=16)
        vit = VisionTransformer(
            arch=arch,
            img_size=32,
            patch_size=16,
            final_norm=False,
            out_type='raw')
    assert _state_shapes(ours) == _state_shapes(vit)
    assert len(ours.layers) == VisionTransformer.arch_zoo[arch]['num_layers']


TINY = dict(embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)
OPTIONS = [
    dict(),
    dict(qkv_bias=False),
    dict(layer_scale_init_value=1e-5),
    dict(pre_norm=True),
    dict(drop_rate=0.1, drop_path_rate=0.2),
    dict(
        layer_cfgs=dict(ffn_type='swiglu_fused'), layer_scale_init_value=1e-5),
    dict(final_norm=True, interpolate_mode='bilinear'),
]


@pytest.mark.parametrize('options', OPTIONS, ids=str)
def test_options_give_vision_transformer_weights_and_output(options):
    torch.manual_seed(0)
    ours = SiameseIMViT(arch=TINY, img_size=32, patch_size=8, **options)
    ours.init_weights()
    vit = VisionTransformer(
        arch=TINY,
        img_size=32,
        patch_size=8,
        out_type='raw',
        **{
            'final_norm': False,
            **options
        })
    vit.load_state_dict(ours.state_dict(), strict=True)
    ours.eval(), vit.eval()
    x = torch.randn(2, 3, 32, 32)
    torch.testing.assert_close(ours(x), vit(x)[0])
    if options.get('pre_norm'):
        assert ours.patch_embed.projection.bias is None
        assert isinstance(ours.pre_norm, torch.nn.LayerNorm)
    if options.get('qkv_bias') is False:
        assert ours.layers[0].attn.qkv.bias is None
    if options.get('layer_scale_init_value'):
        assert torch.all(ours.layers[0].attn.gamma1.weight == 1e-5)


def test_masked_forward_returns_cls_and_visible_tokens():
    torch.manual_seed(0)
    vit = MODELS.build(
        dict(
            type='SiameseIMViT',
            arch=TINY,
            img_size=32,
            patch_size=8,
            layer_scale_init_value=0.1,
            pre_norm=True))
    vit.init_weights()
    mask = torch.zeros(2, 16, dtype=torch.bool)
    mask[0, :6] = True
    mask[1, 10:] = True
    out = vit(torch.randn(2, 3, 32, 32), mask)
    assert out.shape == (2, 1 + 10, 32)


def test_a_width_its_head_count_does_not_divide_is_refused_when_built():
    with pytest.raises(
            ValueError, match='embed_dims=200 is not divisible by '
            'num_heads=16'):
        MODELS.build(
            dict(
                type='SiameseIMViT',
                arch=dict(
                    embed_dims=200,
                    num_layers=1,
                    num_heads=16,
                    feedforward_channels=400)))
