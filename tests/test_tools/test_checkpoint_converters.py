"""Our and the authors' checkpoints through the export CLIs into plain
mmpretrain and timm ViTs."""
import os
import subprocess
import sys

import pytest
import torch

from tests.helpers import load_tool, tiny_siameseim_cfg

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, 'tools', 'model_converters')
ARCH = dict(embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)


def _run(tool, src, dst):
    return subprocess.run(
        [sys.executable,
         os.path.join(TOOLS, tool),
         str(src),
         str(dst)],
        capture_output=True,
        text=True,
        timeout=300)


@pytest.fixture(scope='module')
def pretrain_ckpt(tmp_path_factory):
    """A tiny SiameseIM saved as mmengine's Runner saves it; its momentum
    target is moved away from the online weights so that exporting the
    wrong branch would show."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    with torch.no_grad():
        for p in model.target.module.backbone.parameters():
            p.add_(1.)
    path = tmp_path_factory.mktemp('ckpt') / 'epoch_1.pth'
    torch.save({'meta': {'epoch': 1}, 'state_dict': model.state_dict()}, path)
    backbone = model.backbone
    backbone.eval()
    return path, backbone


def _tool(name):
    """The CLI's module, to call its ``main`` in this process (a fresh
    interpreter per call costs ~10 s here)."""
    return load_tool(os.path.join('model_converters', name))


def _mmpretrain_vit(**kwargs):
    from mmpretrain.models import VisionTransformer
    vit = VisionTransformer(
        arch=ARCH,
        img_size=32,
        patch_size=8,
        final_norm=False,
        out_type='raw',
        **kwargs)
    vit.eval()
    return vit


def _timm_vit(dims=32, heads=2, mlp_ratio=2):
    import timm
    return timm.models.vision_transformer.VisionTransformer(
        img_size=32,
        patch_size=8,
        embed_dim=dims,
        depth=2,
        num_heads=heads,
        mlp_ratio=mlp_ratio,
        num_classes=0,
        final_norm=False).eval()


def test_ours_to_mmpretrain_and_timm_give_the_same_features(
        tmp_path, pretrain_ckpt):
    src, backbone = pretrain_ckpt
    out = _run('mmsiameseim_to_mmpretrain.py', src, tmp_path / 'mmp.pth')
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'kept 28 backbone tensors' in out.stdout
    assert 'neck.* (' in out.stdout and 'target.* (' in out.stdout
    assert 'not provided: head.*, backbone.ln1.* (final norm)' in out.stdout

    state = torch.load(tmp_path / 'mmp.pth', weights_only=True)['state_dict']
    assert all(k.startswith('backbone.') for k in state)
    vit = _mmpretrain_vit()
    vit.load_state_dict({k[9:]: v for k, v in state.items()}, strict=True)
    # and through the init_cfg every config of ours uses
    via_init = _mmpretrain_vit(
        init_cfg=dict(
            type='Pretrained',
            checkpoint=str(tmp_path / 'mmp.pth'),
            prefix='backbone.'))
    via_init.init_weights()

    out = _run('mmsiameseim_to_timm.py', src, tmp_path / 'timm.pth')
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'not provided: head.*, norm.* (final norm)' in out.stdout
    timm_vit = _timm_vit()
    timm_vit.load_state_dict(
        torch.load(tmp_path / 'timm.pth', weights_only=True), strict=True)

    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref = backbone(x)  # SiameseIMViT on the whole (unmasked) image
        torch.testing.assert_close(vit(x)[0], ref)
        torch.testing.assert_close(via_init(x)[0], ref)
        torch.testing.assert_close(timm_vit.forward_features(x), ref)


def test_official_checkpoint_goes_through_both_exporters(
        tmp_path, parity_fixture, capsys):
    official = parity_fixture['official_state_dict']
    src = tmp_path / 'official.pth'
    torch.save({'model': official}, src)
    # in this process: each CLI already ran as a command above
    _tool('mmsiameseim_to_mmpretrain.py').main(
        [str(src), str(tmp_path / 'mmp.pth')])
    printed = capsys.readouterr().out
    assert 'source: official SiameseIM' in printed
    assert "['decoder_pos_embed', 'mm_mask_token']" in printed
    _tool('mmsiameseim_to_timm.py').main(
        [str(src), str(tmp_path / 'timm.pth')])

    from mmpretrain.models import VisionTransformer
    vit = VisionTransformer(
        arch=dict(
            embed_dims=64, num_layers=2, num_heads=4,
            feedforward_channels=256),
        img_size=32,
        patch_size=8,
        final_norm=False,
        out_type='raw')
    vit.eval()
    state = torch.load(tmp_path / 'mmp.pth', weights_only=True)['state_dict']
    vit.load_state_dict({k[9:]: v for k, v in state.items()}, strict=True)
    timm_state = torch.load(tmp_path / 'timm.pth', weights_only=True)
    for key in ('blocks.1.attn.qkv.weight', 'patch_embed.proj.weight',
                'pos_embed', 'cls_token'):  # the online, not the mm_ copy
        torch.testing.assert_close(timm_state[key], official[key])
    timm_vit = _timm_vit(dims=64, heads=4, mlp_ratio=4)
    timm_vit.load_state_dict(timm_state, strict=True)
    x = parity_fixture['inputs']['view_b']
    with torch.no_grad():
        torch.testing.assert_close(timm_vit.forward_features(x), vit(x)[0])


@pytest.mark.parametrize(
    'tool', ['mmsiameseim_to_mmpretrain.py', 'mmsiameseim_to_timm.py'])
def test_wrong_checkpoints_are_refused_naming_keys(tmp_path, tool):
    main = _tool(tool).main
    random_dict = tmp_path / 'random.pth'
    torch.save({'foo': torch.zeros(2), 'bar': torch.ones(1)}, random_dict)
    with pytest.raises(SystemExit) as exit_:
        main([str(random_dict), str(tmp_path / 'out.pth')])
    message = str(exit_.value.code)  # sys.exit(str): status 1, to stderr
    assert message.startswith(f'{random_dict}: unrecognised checkpoint')
    assert "'bar'" in message and "'foo'" in message

    # a ResNet detector: backbone.* present but not a ViT
    detector = tmp_path / 'faster_rcnn.pth'
    torch.save(
        {
            'meta': {},
            'state_dict': {
                'backbone.conv1.weight': torch.zeros(64, 3, 7, 7),
                'backbone.layer1.0.conv1.weight': torch.zeros(64, 64, 1, 1),
                'rpn_head.rpn_conv.weight': torch.zeros(1)
            }
        }, detector)
    with pytest.raises(SystemExit) as exit_:
        main([str(detector), str(tmp_path / 'out.pth')])
    message = str(exit_.value.code)
    assert 'not an mmpretrain VisionTransformer' in message
    assert 'conv1.weight' in message and 'cls_token' in message

    not_a_checkpoint = tmp_path / 'notes.txt'
    not_a_checkpoint.write_text('not a checkpoint')
    with pytest.raises(SystemExit) as exit_:
        main([str(not_a_checkpoint), str(tmp_path / 'out.pth')])
    assert str(exit_.value.code).startswith(
        f'{not_a_checkpoint}: cannot be read as a PyTorch checkpoint')
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / 'absent.pth'), str(tmp_path / 'out.pth')])
    assert 'No such file' in str(exit_.value.code)
    assert not (tmp_path / 'out.pth').exists()
