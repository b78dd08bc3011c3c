"""The ``Pretrained`` init of scope mmsiameseim (the mmpretrain benchmark
configs' backbone loader) refuses checkpoints without the backbone's weights;
mmengine's own ``Pretrained`` loads them and goes on."""
import os

import pytest
import torch
from mmengine.logging import MMLogger

from tests.helpers import save_resnet18_checkpoint, tiny_siameseim_cfg

ARCH = dict(embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)


def _vit(checkpoint, scope='mmsiameseim', arch=ARCH, **init):
    from mmpretrain.models import VisionTransformer

    import mmsiameseim  # noqa: F401
    init_cfg = dict(
        type='Pretrained',
        checkpoint=str(checkpoint),
        prefix='backbone.',
        **init)
    if scope:
        init_cfg['_scope_'] = scope
    return VisionTransformer(
        arch=arch,
        img_size=32,
        patch_size=8,
        final_norm=False,
        out_type='avg_featmap',
        init_cfg=init_cfg)


@pytest.fixture(scope='module')
def ours(tmp_path_factory):
    """A tiny SiameseIM saved as mmengine's Runner saves it."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    torch.manual_seed(0)
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    path = tmp_path_factory.mktemp('ckpt') / 'epoch_1.pth'
    torch.save({'meta': {}, 'state_dict': model.state_dict()}, path)
    return path, model.state_dict()


def test_resnet18_checkpoint_is_refused_naming_what_is_missing_and_held(
        tmp_path):
    ckpt = tmp_path / 'resnet18.pth'
    save_resnet18_checkpoint(ckpt)
    # the bug: mmengine's Pretrained loads nothing and goes on
    plain = _vit(ckpt, scope=None)
    before = plain.layers[0].attn.qkv.weight.clone()
    plain.init_weights()
    assert plain.layers[0].attn.qkv.weight.shape == before.shape

    vit = _vit(ckpt)
    with pytest.raises(ValueError) as err:
        vit.init_weights()
    message = str(err.value)
    assert message.startswith(f"{ckpt} (prefix 'backbone.'): refusing to "
                              'initialise VisionTransformer')
    assert 'supplies 0 of the 28 weights the model needs' in message
    assert 'missing 28: cls_token, pos_embed' in message
    assert 'the file holds 122 tensors: backbone.conv1 (1), backbone.bn1 ' \
        '(5), backbone.layer1 (24)' in message
    assert 'allow_partial=True' in message


def test_file_without_the_prefix_or_not_a_checkpoint_is_named(tmp_path):
    bare = tmp_path / 'resnet18_bare.pth'
    save_resnet18_checkpoint(bare, prefix='')
    with pytest.raises(
            ValueError,
            match=f'{bare}.*no key starts with '
            "'backbone.'; the file holds 122 tensors: conv1"):
        _vit(bare).init_weights()
    text = tmp_path / 'notes.pth'
    text.write_text('not a checkpoint')
    with pytest.raises(
            ValueError, match=f'{text}: cannot be read as a '
            'PyTorch checkpoint'):
        _vit(text).init_weights()
    with pytest.raises(ValueError, match='has no checkpoint'):
        _vit('').init_weights()


def test_our_checkpoint_loads_every_weight_and_keeps_pos_embed(ours):
    path, state = ours
    vit = _vit(path)
    vit.init_weights()
    loaded = vit.state_dict()
    for key, value in state.items():
        if key.startswith('backbone.'):
            assert torch.equal(loaded[key[9:]], value), key
    # the pooled-feature LayerNorm is new by design: identity
    assert torch.equal(vit.ln2.weight, torch.ones(32))


def test_too_few_weights_are_refused_unless_allowed(ours, tmp_path, capsys):
    path, state = ours
    deeper = dict(ARCH, num_layers=3)
    with pytest.raises(
            ValueError,
            match=r'supplies 28 of the 40 weights.*'
            r'missing 12: layers\.2\.ln1\.weight'):
        _vit(path, arch=deeper).init_weights()

    MMLogger.get_instance('test_strict_pretrained')
    vit = _vit(path, arch=deeper, allow_partial=True)
    vit.init_weights()
    logged = capsys.readouterr()
    assert 'allow_partial: VisionTransformer loads 28 of the 40 weights ' \
        'it needs; 12 keep their initialisation: layers.2.ln1.weight' in \
        logged.out + logged.err
    assert torch.equal(vit.layers[1].attn.qkv.weight,
                       state['backbone.layers.1.attn.qkv.weight'])

    wider = tmp_path / 'wider.pth'
    torch.save(
        {
            'state_dict': {
                k: torch.cat([v, v], -1) if k.endswith('cls_token') else v
                for k, v in state.items()
            }
        }, wider)
    with pytest.raises(
            ValueError,
            match=f'(?s){wider}.*do not fit '
            'VisionTransformer.*size mismatch for cls_token'):
        _vit(wider).init_weights()
    assert os.path.getsize(wider) > 0  # the files are left as they were
