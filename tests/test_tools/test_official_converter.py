import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, 'tools', 'model_converters',
                    'official_to_mmsiameseim.py')


def _convert(src, dst, *extra):
    return subprocess.run(
        [sys.executable, TOOL,
         str(src), str(dst), *extra],
        capture_output=True,
        text=True,
        timeout=300)


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
        arch=dict(
            embed_dims=64, num_layers=2, num_heads=4,
            feedforward_channels=256),
        img_size=32,
        patch_size=8,
        final_norm=False,
        init_cfg=dict(
            type='Pretrained',
            checkpoint=str(tmp_path / 'ours.pth'),
            prefix='backbone.'))
    vit.init_weights()
    torch.testing.assert_close(
        vit.layers[1].attn.qkv.weight,
        parity_fixture['official_state_dict']['blocks.1.attn.qkv.weight'])
    backbone = {
        k[9:]: v
        for k, v in state.items() if k.startswith('backbone.')
    }
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


def test_a_text_file_is_named_with_what_was_expected_and_found(tmp_path):
    """Before: 'not_a_checkpoint.pth: 101'."""
    src = tmp_path / 'not_a_checkpoint.pth'
    src.write_text('epoch 400, lr 1.5e-4\n')
    from tests.helpers import load_tool
    tool = load_tool('model_converters/official_to_mmsiameseim.py')
    with pytest.raises(SystemExit) as exit_:
        tool.main([str(src), str(tmp_path / 'out.pth')])
    message = str(exit_.value.code)
    assert message.startswith(f'{src}: cannot be read as a PyTorch '
                              'checkpoint (a file written by torch.save was '
                              'expected')
    assert "it is text, starting 'epoch 400, lr 1.5e-4" in message
    assert not (tmp_path / 'out.pth').exists()


@pytest.mark.parametrize('drop', [
    'blocks.1.norm1.weight', 'predictor_decoder_blocks.0.mlp.fc2.bias',
    'mm_blocks.0.attn.proj.weight', 'decoder_pos_mlp.bias'
])
def test_a_missing_official_key_is_named_as_in_the_users_file(
        tmp_path, parity_fixture, drop):
    """Before: reported under our converted name (backbone.layers.1.ln1...)
    instead of the file's own."""
    from mmsiameseim.apis.official import our_key
    official = dict(parity_fixture['official_state_dict'])
    assert drop in official
    del official[drop]
    src = tmp_path / 'official.pth'
    torch.save({'model': official}, src)
    from tests.helpers import load_tool
    tool = load_tool('model_converters/official_to_mmsiameseim.py')
    with pytest.raises(SystemExit) as exit_:
        tool.main([
            str(src),
            str(tmp_path / 'out.pth'), '--num-heads', '4',
            '--decoder-num-heads', '4'
        ])
    message = str(exit_.value.code)
    assert message.startswith(f'{src}: the official checkpoint does not '
                              'match the SiameseIM its shapes describe')
    assert f"it lacks the official keys ['{drop}']" in message
    assert our_key(drop) not in message
    assert not (tmp_path / 'out.pth').exists()


def test_token_batchnorm_keys_are_named_with_their_bn(tmp_path,
                                                      parity_fixture):
    from mmsiameseim.apis.official import official_key, our_key
    official = parity_fixture['official_state_dict']
    bn = [k for k in official if '.bn.' in k]
    assert bn  # the fixture's projector / predictor use BatchNorm
    for key in official:
        ours = our_key(key)
        if ours is not None:
            assert official_key(ours, token_bn=bool(bn)) == key


def test_resnet18_is_refused_naming_the_official_keys_it_lacks(tmp_path):
    from tests.helpers import save_resnet18_checkpoint
    src = tmp_path / 'resnet18.pth'
    save_resnet18_checkpoint(src, prefix='')
    out = _convert(src, tmp_path / 'out.pth')
    assert out.returncode == 1
    assert out.stderr.startswith(f'{src}: not an official SiameseIM '
                                 "checkpoint: missing keys ['cls_token'")
    assert "its keys are ['bn1.bias'" in out.stderr
    assert not (tmp_path / 'out.pth').exists()
