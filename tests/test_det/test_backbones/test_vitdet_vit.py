import pytest
import torch
from mmengine.logging import MMLogger

from tests.test_det.helpers import save_demo_pretrain_checkpoint, tiny_vit


def test_output_is_the_stride_p_map_and_padding_windows_works():
    vit = tiny_vit()
    (out, ) = vit(torch.randn(2, 3, 64, 44))  # 16 x 11 grid, windows of 4
    assert out.shape == (2, 32, 16, 11)


def test_window_and_global_blocks_and_rel_pos_tables():
    vit = tiny_vit()
    assert [layer.window_size for layer in vit.layers] == [4, 0, 4, 0]
    # windowed: 2 * 4 - 1 offsets; global: 2 * (64 / 4) - 1
    assert vit.layers[0].attn.rel_pos_h.shape == (7, 8)
    assert vit.layers[1].attn.rel_pos_w.shape == (31, 8)
    assert all((layer.attn.rel_pos_h == 0).all() for layer in vit.layers)


def test_windowed_block_sees_only_its_window():
    vit = tiny_vit(global_attn_indexes=()).eval()
    x = torch.randn(1, 16, 16, 32)
    y = x.clone()
    y[:, 8:, 8:] += torch.randn(8, 8, 32)  # only the bottom-right windows
    block = vit.layers[0]
    with torch.no_grad():
        diff = (block(x) - block(y)).abs().sum(-1)[0]
    assert diff[:8].max() == 0 and diff[:, :8].max() == 0
    assert diff[8:, 8:].min() > 0


def test_global_block_mixes_everything_and_rel_pos_changes_output():
    vit = tiny_vit().eval()
    block = vit.layers[1]
    x = torch.randn(1, 16, 16, 32)
    y = x.clone()
    y[:, 15, 15] += torch.randn(32)
    with torch.no_grad():
        assert (block(x) - block(y))[0, 0, 0].abs().sum() > 0
        before = block(x)
        block.attn.rel_pos_h.normal_()
        assert not torch.allclose(before, block(x))


def test_pos_embed_is_resized_to_the_feature_map():
    vit = tiny_vit()
    vit.pos_embed.data.normal_()
    table = vit.abs_pos_embed((8, 8))  # pretraining grid: 32 / 4
    assert torch.equal(table.reshape(1, 64, -1), vit.pos_embed[:, 1:])
    assert vit.abs_pos_embed((16, 12)).shape == (1, 16, 12, 32)


def test_loads_our_pretrain_checkpoint_and_reports_keys(tmp_path, caplog):
    ckpt = tmp_path / 'pretrain.pth'
    pretrain = save_demo_pretrain_checkpoint(ckpt)
    vit = tiny_vit(
        arch=dict(
            embed_dims=128,
            num_layers=4,
            num_heads=4,
            feedforward_channels=512),
        img_size=64,
        in_channels=3,
        init_cfg=dict(
            type='Pretrained', checkpoint=str(ckpt), prefix='backbone.'))
    MMLogger.get_instance('test_vitdet_load')
    report = vit.load_pretrained(str(ckpt))
    assert report.dropped == ['cls_token']
    assert len(report.new) == 8  # rel_pos_h / _w of 4 blocks
    assert all('rel_pos' in k for k in report.new)
    assert report.adapted == [
        'patch_embed.projection.weight (128, 1, 4, 4) '
        '-> (128, 3, 4, 4)'
    ]
    assert len(report.loaded) == 50 and report.ignored
    src = pretrain.backbone.state_dict()
    for key in ('pos_embed', 'layers.3.attn.qkv.weight',
                'layers.0.ffn.layers.1.bias'):
        assert torch.equal(vit.state_dict()[key], src[key])
    # 1-channel patch embedding replicated over RGB, divided by 3
    w = vit.patch_embed.projection.weight
    assert torch.allclose(
        w.sum(1, keepdim=True), src['patch_embed.projection.weight'])


def test_keep_init_leaves_the_named_weights_as_the_random_vit_has_them(
        tmp_path, capsys):
    ckpt = tmp_path / 'pretrain.pth'
    pretrain = save_demo_pretrain_checkpoint(ckpt)
    arch = dict(
        embed_dims=128, num_layers=4, num_heads=4, feedforward_channels=512)
    torch.manual_seed(3)
    random = tiny_vit(arch=arch, img_size=64, in_channels=3)
    random.init_weights()
    torch.manual_seed(3)
    vit = tiny_vit(
        arch=arch,
        img_size=64,
        in_channels=3,
        init_cfg=dict(
            type='Pretrained',
            checkpoint=str(ckpt),
            keep_init=['pos_embed', 'layers.1.*']))
    MMLogger.get_instance('test_vitdet_keep_init')
    vit.init_weights()
    src = pretrain.backbone.state_dict()
    ours, theirs = vit.state_dict(), random.state_dict()
    for key in ours:
        if key == 'pos_embed' or key.startswith('layers.1.'):
            assert torch.equal(ours[key], theirs[key]), key
        elif key in src and 'patch_embed' not in key:
            assert torch.equal(ours[key], src[key]), key
    assert not torch.equal(vit.pos_embed, src['pos_embed'])
    logged = capsys.readouterr()
    # the position table and layer 1's 12 weights the file holds
    assert '13 kept as initialised (keep_init)' in logged.out + logged.err


def test_pretrained_pos_embed_of_another_grid_is_resized(tmp_path):
    vit = tiny_vit()
    state = {'backbone.' + k: v for k, v in vit.state_dict().items()}
    state['backbone.pos_embed'] = torch.randn(1, 1 + 4 * 4, 32)
    torch.save({'state_dict': state}, tmp_path / 'c.pth')
    loaded = tiny_vit()
    report = loaded.load_pretrained(str(tmp_path / 'c.pth'))
    assert report.new == [] and report.dropped == []
    assert report.adapted == ['pos_embed (1, 17, 32) -> (1, 65, 32)']
    assert loaded.pos_embed.shape == (1, 65, 32)
    cls_pos = state['backbone.pos_embed'][:, :1]
    assert torch.equal(loaded.pos_embed[:, :1], cls_pos)
    assert not torch.equal(loaded.pos_embed, vit.pos_embed)


def test_bad_checkpoints_give_clear_errors(tmp_path):
    torch.save({'state_dict': {'head.w': torch.zeros(1)}}, tmp_path / 'h.pth')
    with pytest.raises(ValueError, match="no key starts with 'backbone.'"):
        tiny_vit().load_pretrained(str(tmp_path / 'h.pth'))
    with pytest.raises(ValueError, match='init_cfg.checkpoint'):
        tiny_vit(
            init_cfg=dict(type='Pretrained', checkpoint='')).init_weights()
    with pytest.raises(ValueError, match='global_attn_indexes'):
        tiny_vit(global_attn_indexes=(4, ))


def test_resnet18_checkpoint_is_refused_naming_missing_and_held(tmp_path):
    """Before: 'loaded 0 tensors; 171 missing' at INFO, and fine-tuning
    from random weights."""
    from tests.helpers import save_resnet18_checkpoint
    ckpt = tmp_path / 'resnet18.pth'
    save_resnet18_checkpoint(ckpt)
    vit = tiny_vit(
        init_cfg=dict(
            type='Pretrained', checkpoint=str(ckpt), prefix='backbone.'))
    before = {k: v.clone() for k, v in vit.state_dict().items()}
    with pytest.raises(ValueError) as err:
        vit.init_weights()
    message = str(err.value)
    assert message.startswith(f"{ckpt} (prefix 'backbone.'): refusing to "
                              'initialise ViTDetViT')
    # 4 + 12 per block; the 8 relative position tables are new by design
    assert 'supplies 0 of the 51 weights' in message
    assert 'missing 51: pos_embed, patch_embed.projection.weight' in message
    assert 'backbone.layer1 (24)' in message
    # refused before anything was loaded
    assert all(torch.equal(v, before[k]) for k, v in vit.state_dict().items())


def test_a_shallower_vit_is_refused_unless_partial_loads_are_allowed(
        tmp_path, capsys):
    two = tiny_vit(
        arch=dict(
            embed_dims=32, num_layers=2, num_heads=4, feedforward_channels=64),
        global_attn_indexes=(1, ))
    torch.save(
        {
            'state_dict': {
                'backbone.' + k: v
                for k, v in two.state_dict().items()
            }
        }, tmp_path / 'two.pth')
    with pytest.raises(
            ValueError,
            match=r'supplies 27 of the 51 weights.*'
            r'missing 24: layers\.2\.ln1\.weight'):
        tiny_vit().load_pretrained(str(tmp_path / 'two.pth'))
    MMLogger.get_instance('test_vitdet_partial')
    vit = tiny_vit()
    vit.load_pretrained(str(tmp_path / 'two.pth'), allow_partial=True)
    logged = capsys.readouterr()
    assert 'allow_partial: ViTDetViT loads 27 of the 51 weights' in \
        logged.out + logged.err
    assert torch.equal(vit.layers[1].attn.qkv.weight,
                       two.layers[1].attn.qkv.weight)
