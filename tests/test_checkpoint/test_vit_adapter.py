"""The one ViT checkpoint adapter, function by function, on tiny tensors."""
import pytest
import torch
import torch.nn.functional as F

from mmsiameseim.checkpoint import (KeyReport, adapt_in_channels,
                                    adapt_vit_checkpoint, grid_side,
                                    resize_pos_embed_to, strip_prefix)


def test_strip_prefix_selects_or_keeps_the_others():
    state = {'backbone.a': 1, 'backbone.b.c': 2, 'neck.d': 3}
    assert strip_prefix(state, 'backbone.') == {'a': 1, 'b.c': 2}
    wrapped = {'module.x': 1, 'y': 2}
    assert strip_prefix(
        wrapped, 'module.', keep_others=True) == {
            'x': 1,
            'y': 2
        }
    assert strip_prefix(state, '') == state


def test_grid_side_refuses_a_table_that_is_not_a_square_grid():
    assert grid_side(1 + 14 * 14) == 14
    assert grid_side(16, num_extra_tokens=0) == 4
    with pytest.raises(
            ValueError,
            match=r'backbone\.pos_embed has 15 patch '
            'positions plus 1 extra.*not a square grid'):
        grid_side(16, key='backbone.pos_embed')
    with pytest.raises(ValueError, match='not a square grid'):
        grid_side(1)


def test_resize_keeps_cls_and_resizes_the_grid_bicubically():
    torch.manual_seed(0)
    table = torch.randn(1, 1 + 4 * 4, 6)
    out = resize_pos_embed_to(table, (8, 6))
    assert out.shape == (1, 1 + 8 * 6, 6)
    assert torch.equal(out[:, :1], table[:, :1])
    grid = table[:, 1:].reshape(1, 4, 4, 6).permute(0, 3, 1, 2)
    expected = F.interpolate(
        grid, size=(8, 6), mode='bicubic', align_corners=False)
    torch.testing.assert_close(out[:, 1:], expected.flatten(2).transpose(1, 2))
    assert resize_pos_embed_to(table, (4, 4)) is table
    with pytest.raises(ValueError, match='ckpt.pos_embed has 15 patch'):
        resize_pos_embed_to(
            torch.zeros(1, 16, 6), (2, 2),
            num_extra_tokens=1,
            key='ckpt.pos_embed')


def test_gray_patch_embedding_gives_the_gray_response_on_rgb():
    weight = torch.randn(5, 1, 4, 4)
    rgb = adapt_in_channels(weight, 3)
    assert rgb.shape == (5, 3, 4, 4)
    img = torch.rand(2, 1, 8, 8)
    torch.testing.assert_close(
        F.conv2d(img.repeat(1, 3, 1, 1), rgb), F.conv2d(img, weight))
    with pytest.raises(
            ValueError, match=r'w: only a 1-channel weight.*'
            r'\(5, 3, 4, 4\)'):
        adapt_in_channels(rgb, 1, key='w')


def _vit_state(grid=4, channels=1, dims=8):
    return {
        'cls_token': torch.randn(1, 1, dims),
        'pos_embed': torch.randn(1, 1 + grid * grid, dims),
        'patch_embed.projection.weight': torch.randn(dims, channels, 2, 2),
        'patch_embed.projection.bias': torch.randn(dims),
        'layers.0.ln1.weight': torch.randn(dims)
    }


def test_adapter_reports_every_key_and_adapts_what_differs():
    file_state = {'backbone.' + k: v for k, v in _vit_state().items()}
    file_state['backbone.ln1.weight'] = torch.ones(8)  # a final norm
    file_state['neck.w'] = torch.zeros(2)
    target = _vit_state(grid=6, channels=3)
    del target['cls_token']
    target['layers.0.attn.rel_pos_h'] = torch.zeros(3, 4)
    out, report = adapt_vit_checkpoint(
        file_state,
        target,
        model='Tiny',
        checkpoint='c.pth',
        allow_missing=('*.rel_pos_h', ))
    assert report.loaded == [
        'patch_embed.projection.bias', 'layers.0.ln1.weight'
    ]
    assert report.adapted == [
        'pos_embed (1, 17, 8) -> (1, 37, 8)',
        'patch_embed.projection.weight (8, 1, 2, 2) -> (8, 3, 2, 2)'
    ]
    assert report.new == ['layers.0.attn.rel_pos_h']
    assert report.dropped == ['cls_token', 'ln1.weight']
    assert report.ignored == ['neck.w']
    assert set(out) == set(target) - {'layers.0.attn.rel_pos_h'}
    assert out['pos_embed'].shape == target['pos_embed'].shape
    text = report.format('Tiny <- c.pth')
    assert text.startswith('Tiny <- c.pth: 2 loaded, 2 adapted, 1 new '
                           '(model init), 2 dropped, 1 ignored (not '
                           'backbone.*)')
    assert '  new: 1 x rel_pos_h (e.g. layers.0.attn.rel_pos_h)' in text

    kept, report = adapt_vit_checkpoint(
        file_state,
        target,
        model='Tiny',
        checkpoint='c.pth',
        allow_missing=('*.rel_pos_h', ),
        adapt_shapes=False)
    assert report.adapted == [] and kept['pos_embed'].shape == (1, 17, 8)


def test_adapter_errors_name_the_file_and_the_key():
    state = {'backbone.' + k: v for k, v in _vit_state().items()}
    target = _vit_state(dims=16)
    with pytest.raises(
            ValueError,
            match=r"c\.pth \(prefix 'backbone\.'\): "
            r'backbone\.cls_token: checkpoint shape \(1, 1, 8\) '
            r"does not fit the model's \(1, 1, 16\)"):
        adapt_vit_checkpoint(state, target, model='T', checkpoint='c.pth')
    with pytest.raises(
            ValueError,
            match=r"c\.pth \(prefix 'head\.'\): no "
            r"key starts with 'head\.'; the file holds 5 tensors"):
        adapt_vit_checkpoint(
            state, target, model='T', checkpoint='c.pth', prefix='head.')
    target['layers.1.ln1.weight'] = torch.zeros(16)
    with pytest.raises(
            ValueError,
            match=r'refusing to initialise T.*'
            r'supplies 5 of the 6 weights.*layers\.1\.ln1'):
        adapt_vit_checkpoint(state, target, model='T', checkpoint='c.pth')


def test_empty_report_formats():
    assert KeyReport(prefix='b.').format('x') == (
        'x: 0 loaded, 0 adapted, 0 new (model init), 0 dropped, 0 ignored '
        '(not b.*)')
