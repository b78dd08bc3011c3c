"""Loading a SiameseIM pretraining checkpoint into mmseg's MAE backbone."""
import pytest
import torch

from tests.helpers import tiny_siameseim_cfg

# tiny_siameseim_cfg's ViT: 32 wide, 2 blocks, 2 heads, MLP ratio 2.
DIMS, HEADS, LAYERS, PATCH = 32, 2, 2, 8


def _pretrain_checkpoint(path, in_channels=3, extra=None):
    """A tiny SiameseIM saved as mmengine's Runner saves it."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    torch.manual_seed(0)
    model = MODELS.build(
        tiny_siameseim_cfg(
            img_size=32, patch_size=PATCH, dims=DIMS, in_channels=in_channels))
    model.init_weights()
    state = model.state_dict()
    state.update(extra or {})
    torch.save({'meta': {}, 'state_dict': state}, path)
    return state


def _seg_backbone(checkpoint, img_size=32, in_channels=3, **kwargs):
    from mmseg.registry import MODELS

    import mmsiameseim.seg  # noqa: F401
    cfg = dict(
        type='SiameseIMMAE',
        img_size=(img_size, img_size),
        patch_size=PATCH,
        in_channels=in_channels,
        embed_dims=DIMS,
        num_layers=LAYERS,
        num_heads=HEADS,
        mlp_ratio=2,
        init_values=1.0,
        out_indices=[0, 1],
        norm_cfg=dict(type='LN', eps=1e-6),
        init_cfg=dict(
            type='Pretrained', checkpoint=str(checkpoint), prefix='backbone.'))
    cfg.update(kwargs)
    return MODELS.build(cfg)


def test_every_backbone_weight_lands_and_features_match_the_plain_vit(
        tmp_path):
    ckpt = tmp_path / 'pretrain.pth'
    state = _pretrain_checkpoint(ckpt)
    backbone = _seg_backbone(ckpt)
    backbone.init_weights()

    loaded = backbone.state_dict()
    ours = {k[9:]: v for k, v in state.items() if k.startswith('backbone.')}
    assert len(ours) == 4 + 12 * LAYERS
    for key, value in ours.items():
        torch.testing.assert_close(loaded[key], value, rtol=0, atol=0, msg=key)
    for layer in backbone.layers:
        assert torch.equal(layer.gamma_1, torch.ones(DIMS))
        assert torch.equal(layer.gamma_2, torch.ones(DIMS))
        assert not layer.attn.relative_position_bias_table.any()

    # Layer scale 1 and zero relative bias: the same function as the
    # pretrained ViT, loaded into mmpretrain's VisionTransformer.
    from mmpretrain.models import VisionTransformer
    vit = VisionTransformer(
        arch=dict(
            embed_dims=DIMS,
            num_layers=LAYERS,
            num_heads=HEADS,
            feedforward_channels=DIMS * 2),
        img_size=32,
        patch_size=PATCH,
        final_norm=False,
        out_type='featmap',
        out_indices=(0, 1),
        init_cfg=dict(
            type='Pretrained', checkpoint=str(ckpt), prefix='backbone.'))
    vit.init_weights()
    backbone.eval(), vit.eval()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        for ours_out, vit_out in zip(backbone(x), vit(x)):
            torch.testing.assert_close(ours_out, vit_out, rtol=1e-5, atol=1e-5)


def test_report_resizes_pos_embed_adapts_gray_input_and_lists_new_keys(
        tmp_path):
    from mmsiameseim.seg import siameseim_to_mmseg_mae
    ckpt = tmp_path / 'gray.pth'
    state = _pretrain_checkpoint(ckpt, in_channels=1)
    backbone = _seg_backbone(ckpt, img_size=64)  # 4x4 grid -> 8x8
    converted, report = siameseim_to_mmseg_mae(state, backbone.state_dict())

    assert sorted(report.adapted) == [
        'patch_embed.projection.weight (32, 1, 8, 8) -> (32, 3, 8, 8)',
        'pos_embed (1, 17, 32) -> (1, 65, 32)'
    ]
    assert len(report.loaded) == 2 + 12 * LAYERS
    assert report.dropped == []
    assert report.ignored and not any(
        k.startswith('backbone.') for k in report.ignored)
    assert sorted({k.split('.')[-1]
                   for k in report.new}) == [
                       'gamma_1', 'gamma_2', 'relative_position_bias_table',
                       'relative_position_index'
                   ]
    assert len(report.new) == 4 * LAYERS

    gray = state['backbone.patch_embed.projection.weight']
    torch.testing.assert_close(converted['patch_embed.projection.weight'],
                               gray.repeat(1, 3, 1, 1) / 3)
    # Same response to a gray RGB image as the 1-channel weights to gray.
    img = torch.rand(1, 1, 8, 8)
    torch.testing.assert_close(
        torch.nn.functional.conv2d(
            img.repeat(1, 3, 1, 1),
            converted['patch_embed.projection.weight']),
        torch.nn.functional.conv2d(img, gray))
    pos = converted['pos_embed']
    torch.testing.assert_close(pos[:, 0], state['backbone.pos_embed'][:, 0])

    text = report.format('SiameseIM -> mmseg MAE gray.pth')
    assert text.startswith(f'SiameseIM -> mmseg MAE gray.pth: '
                           f'{2 + 12 * LAYERS} loaded, 2 adapted, '
                           f'{4 * LAYERS} new (model init), 0 dropped')

    backbone.init_weights()  # the same conversion through init_cfg
    torch.testing.assert_close(backbone.pos_embed, pos)


def test_final_norm_of_the_checkpoint_is_reported_as_dropped(tmp_path):
    from mmsiameseim.seg import siameseim_to_mmseg_mae
    ckpt = tmp_path / 'with_norm.pth'
    extra = {
        'backbone.ln1.weight': torch.ones(DIMS),
        'backbone.ln1.bias': torch.zeros(DIMS)
    }
    state = _pretrain_checkpoint(ckpt, extra=extra)
    backbone = _seg_backbone(ckpt)  # final_norm=False, as mmseg's MAE
    _, report = siameseim_to_mmseg_mae(state, backbone.state_dict())
    assert report.dropped == ['ln1.weight', 'ln1.bias']


def test_bad_checkpoints_fail_with_the_key_at_fault(tmp_path):
    ckpt = tmp_path / 'pretrain.pth'
    _pretrain_checkpoint(ckpt)
    with pytest.raises(
            ValueError,
            match=r'backbone\.cls_token: checkpoint '
            r'shape \(1, 1, 32\) does not fit the model.s '
            r'\(1, 1, 64\)'):
        _seg_backbone(ckpt, embed_dims=64, num_heads=2).init_weights()
    with pytest.raises(
            ValueError,
            match=r'supplies 28 of the 40 weights.*'
            r'missing 12: layers\.2\.'):
        _seg_backbone(ckpt, num_layers=3).init_weights()
    with pytest.raises(ValueError, match='init_cfg.checkpoint is empty'):
        _seg_backbone('').init_weights()
    torch.save({'state_dict': {'head.w': torch.zeros(1)}}, tmp_path / 'x.pt')
    with pytest.raises(ValueError, match="no key starts with 'backbone.'"):
        _seg_backbone(tmp_path / 'x.pt').init_weights()


def test_resnet18_checkpoint_is_refused_naming_missing_and_held(tmp_path):
    from tests.helpers import save_resnet18_checkpoint
    ckpt = tmp_path / 'resnet18.pth'
    save_resnet18_checkpoint(ckpt)
    with pytest.raises(ValueError) as err:
        _seg_backbone(ckpt).init_weights()
    message = str(err.value)
    assert message.startswith(f"{ckpt} (prefix 'backbone.'): refusing to "
                              'initialise mmseg MAE')
    assert 'supplies 0 of the 28 weights' in message
    assert 'missing 28: cls_token' in message
    assert 'the file holds 122 tensors: backbone.conv1 (1)' in message


def test_partial_load_only_when_allowed(tmp_path, capsys):
    from mmengine.logging import MMLogger
    ckpt = tmp_path / 'pretrain.pth'
    state = _pretrain_checkpoint(ckpt)
    MMLogger.get_instance('test_seg_partial')
    backbone = _seg_backbone(
        ckpt,
        num_layers=3,
        out_indices=[2],
        init_cfg=dict(
            type='Pretrained', checkpoint=str(ckpt), allow_partial=True))
    backbone.init_weights()
    logged = capsys.readouterr()
    assert 'allow_partial: mmseg MAE loads 28 of the 40 weights' in \
        logged.out + logged.err
    torch.testing.assert_close(backbone.layers[1].attn.qkv.weight,
                               state['backbone.layers.1.attn.qkv.weight'])


def test_keep_init_keeps_mmsegs_own_weights_for_the_named_keys(
        tmp_path, capsys):
    from mmengine.logging import MMLogger
    ckpt = tmp_path / 'pretrain.pth'
    state = _pretrain_checkpoint(ckpt)
    MMLogger.get_instance('test_seg_keep_init')
    torch.manual_seed(1)
    own = _seg_backbone(ckpt, init_cfg=None)
    own.init_weights()  # mmseg's MAE initialisation: a zero position table
    torch.manual_seed(1)
    backbone = _seg_backbone(
        ckpt,
        init_cfg=dict(
            type='Pretrained',
            checkpoint=str(ckpt),
            keep_init=['pos_embed', 'layers.1.*']))
    backbone.init_weights()
    logged = capsys.readouterr()
    assert not state['backbone.pos_embed'].eq(0).all()
    assert torch.equal(backbone.pos_embed, own.pos_embed)
    assert not backbone.pos_embed.any()
    for key, value in backbone.layers[1].state_dict().items():
        assert torch.equal(value, own.layers[1].state_dict()[key]), key
    # everything else comes from the checkpoint
    torch.testing.assert_close(backbone.layers[0].attn.qkv.weight,
                               state['backbone.layers.0.attn.qkv.weight'])
    torch.testing.assert_close(backbone.cls_token, state['backbone.cls_token'])
    # 1 position table and layer 1's 12 weights, counted and named
    assert '13 kept as initialised (keep_init)' in logged.out + logged.err
    assert 'kept as initialised: 1 x pos_embed' in logged.out + logged.err

    # one pattern given as a string (--cfg-options ...keep_init=pos_embed)
    torch.manual_seed(1)
    one = _seg_backbone(
        ckpt,
        init_cfg=dict(
            type='Pretrained', checkpoint=str(ckpt), keep_init='pos_embed'))
    one.init_weights()
    assert not one.pos_embed.any()
    torch.testing.assert_close(one.layers[1].attn.qkv.weight,
                               state['backbone.layers.1.attn.qkv.weight'])

    with pytest.raises(
            ValueError,
            match=r"keep_init pattern 'posembed' "
            'matches no key of the mmseg MAE'):
        _seg_backbone(
            ckpt,
            init_cfg=dict(
                type='Pretrained',
                checkpoint=str(ckpt),
                keep_init=['posembed'])).init_weights()
