import os
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, 'tools', 'model_converters',
                    'official_to_mmsiameseim.py')


def _convert(src, dst, *extra):
    return subprocess.run([sys.executable, TOOL, str(src), str(dst), *extra],
                          capture_output=True, text=True, timeout=300)


def test_official_checkpoint_converts_and_feeds_a_plain_vit(
        tmp_path, parity_fixture):
    src = tmp_path / 'official.pth'
    torch.save({'model': parity_fixture['official_state_dict']}, src)
    out = _convert(src, tmp_path / 'ours.pth', '--num-heads', '4',
                   '--decoder-num-heads', '4')
    assert out.returncode == 0, out.stderr[-2000:]
    ckpt = torch.load(tmp_path / 'ours.pth', weights_only=True)
    state = ckpt['state_dict']
    assert any(k.startswith('target.module.') for k in state)

    from mmpretrain.models import VisionTransformer
    vit = VisionTransformer(
        arch=dict(embed_dims=64, num_layers=2, num_heads=4,
                  feedforward_channels=256),
        img_size=32, patch_size=8, final_norm=False,
        init_cfg=dict(type='Pretrained', checkpoint=str(tmp_path / 'ours.pth'),
                      prefix='backbone.'))
    vit.init_weights()
    torch.testing.assert_close(
        vit.layers[1].attn.qkv.weight,
        parity_fixture['official_state_dict']['blocks.1.attn.qkv.weight'])
    backbone = {k[9:]: v for k, v in state.items()
                if k.startswith('backbone.')}
    result = vit.load_state_dict(backbone, strict=False)
    assert result.missing_keys == [] and result.unexpected_keys == []


def test_non_siameseim_checkpoint_is_refused_with_its_keys(tmp_path):
    from mmpretrain.models import VisionTransformer
    vit = VisionTransformer(arch='deit-tiny', img_size=32, patch_size=8)
    src = tmp_path / 'vit.pth'
    torch.save({'state_dict': vit.state_dict()}, src)
    out = _convert(src, tmp_path / 'out.pth')
    assert out.returncode != 0
    assert 'not an official SiameseIM checkpoint' in out.stderr
    assert 'missing keys' in out.stderr and 'cls_token' in out.stderr
    assert not (tmp_path / 'out.pth').exists()
