"""Key mapping of the checkpoint exporters (the CLIs are tested in
tests/test_tools/test_checkpoint_converters.py)."""
import pytest
import torch

from mmsiameseim.apis.convert import (load_pretrained_state,
                                      to_mmpretrain_backbone, to_timm_vit)


def _vit_b_state(**kwargs):
    from mmpretrain.models import VisionTransformer
    with torch.device('meta'):
        vit = VisionTransformer(
            arch='b', img_size=224, patch_size=16, **kwargs)
    return {'backbone.' + k: v for k, v in vit.state_dict().items()}


def test_vit_b_maps_onto_timm_vit_base_patch16_224_key_for_key():
    import timm
    with torch.device('meta'):
        ref = timm.create_model(
            'vit_base_patch16_224',
            pretrained=False,
            num_classes=0,
            final_norm=False)
    ours = _vit_b_state(final_norm=False)
    ours['neck.pred.weight'] = torch.zeros(1)
    out, report = to_timm_vit({'state_dict': ours})
    assert list(out) == list(ref.state_dict())
    for key, value in ref.state_dict().items():
        assert out[key].shape == value.shape, key
    assert out['pos_embed'].shape == (1, 197, 768)  # cls position included
    assert report['dropped'] == {'neck': 1}
    assert report['not_provided'] == ['head.*', 'norm.* (final norm)']
    assert report['arch'] == dict(
        embed_dims=768,
        num_layers=12,
        feedforward_channels=3072,
        img_size=224,
        patch_size=16,
        in_channels=3,
        final_norm=False)


def test_a_final_norm_is_exported_as_timm_norm():
    import timm

    from mmsiameseim.models.backbones.siameseim_vit import SiameseIMViT
    arch = dict(
        embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)
    ours = SiameseIMViT(arch=arch, img_size=32, patch_size=8, final_norm=True)
    ours.init_weights()
    ours.ln1.weight.data.uniform_(0.5, 1.5)
    ours.eval()
    state = {'backbone.' + k: v for k, v in ours.state_dict().items()}
    out, report = to_timm_vit(state)  # a bare state dict is accepted too
    assert report['not_provided'] == ['head.*']
    ref = timm.models.vision_transformer.VisionTransformer(
        img_size=32,
        patch_size=8,
        embed_dim=32,
        depth=2,
        num_heads=2,
        mlp_ratio=2,
        num_classes=0).eval()
    ref.load_state_dict(out, strict=True)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(ref.forward_features(x), ours(x))
    mm_state, mm_report = to_mmpretrain_backbone(state)
    assert 'backbone.ln1.weight' in mm_state
    assert mm_report['not_provided'] == ['head.*']


def test_official_keys_are_mapped_and_the_rest_reported(parity_fixture):
    official = {'model': parity_fixture['official_state_dict']}
    state, report = to_mmpretrain_backbone(official)
    assert report['source'] == 'official SiameseIM'
    assert sorted(
        report['official_skipped']) == ['decoder_pos_embed', 'mm_mask_token']
    assert set(report['dropped']) == {'neck', 'target'}
    torch.testing.assert_close(
        state['backbone.layers.1.ffn.layers.0.0.weight'],
        parity_fixture['official_state_dict']['blocks.1.mlp.fc1.weight'])


@pytest.mark.parametrize('bad, words', [
    ({
        'state_dict': {
            'conv1.weight': torch.zeros(1)
        }
    }, ['unrecognised checkpoint', 'conv1.weight', 'cls_token']),
    ([1, 2], ['expected a checkpoint dict', 'list']),
    ({
        'state_dict': {
            'backbone.patch_embed.projection.weight': torch.zeros(4, 3, 2, 2),
            'backbone.layers.0.gamma1.weight': torch.zeros(4)
        }
    }, [
        'not an mmpretrain VisionTransformer', 'cls_token',
        'layers.0.gamma1.weight', 'layers.0.attn.qkv.weight'
    ]),
])
def test_unrecognised_inputs_are_refused_naming_keys(bad, words):
    with pytest.raises(ValueError) as err:
        to_timm_vit(bad)
    for word in words:
        assert word in str(err.value)


def test_module_prefix_of_wrapped_models_is_stripped():
    state = {'module.backbone.cls_token': torch.zeros(1)}
    ours, report = load_pretrained_state({'state_dict': state})
    assert list(ours) == ['backbone.cls_token']


@pytest.mark.parametrize('convert', [to_mmpretrain_backbone, to_timm_vit])
@pytest.mark.parametrize('prefix', ['backbone.', ''])
def test_resnet18_checkpoint_is_refused_naming_file_missing_and_held(
        tmp_path, convert, prefix):
    from tests.helpers import save_resnet18_checkpoint
    path = tmp_path / 'resnet18.pth'
    save_resnet18_checkpoint(path, prefix=prefix)
    with pytest.raises(ValueError) as err:
        convert(str(path))
    message = str(err.value)
    assert message.startswith(f'{path}: ')
    if prefix:  # an mmpretrain ResNet classifier
        assert 'not an mmpretrain VisionTransformer: missing' in message
        assert "'cls_token'" in message and "'conv1.weight'" in message
    else:  # a torchvision ResNet
        assert 'unrecognised checkpoint' in message
        assert "'cls_token'" in message and "'conv1.weight'" in message
    assert not (tmp_path / 'out.pth').exists()


def test_official_keys_missing_are_named_as_the_file_names_them(
        parity_fixture):
    official = dict(parity_fixture['official_state_dict'])
    del official['blocks.1.mlp.fc2.bias']
    with pytest.raises(ValueError) as err:
        to_timm_vit({'model': official})
    assert "'blocks.1.mlp.fc2.bias'" in str(err.value)
    assert 'layers.1.ffn' not in str(err.value)
