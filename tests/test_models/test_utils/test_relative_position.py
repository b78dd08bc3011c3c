import torch

from mmsiameseim.models.utils import (crop_pair_offsets,
                                      relative_patch_centres,
                                      relative_sincos_embed)


def _centres(boxes, flips, W=100, grid=4, target_grid=None):
    offsets = crop_pair_offsets(
        torch.tensor([boxes], dtype=torch.float32), torch.tensor([flips]),
        torch.tensor([float(W)]))
    rows, cols = relative_patch_centres(offsets, grid, target_grid)
    return offsets, rows[0], cols[0]


def _brute_force(boxes, flips, W, grid, target_grid=None):
    """Map each target patch centre through the original image by hand."""
    (t1, l1, h1, w1), (t2, l2, h2, w2) = boxes
    tg = target_grid or grid
    rows, cols = [], []
    for u in range(tg):
        for v in range(tg):
            fy, fx = (u + .5) / tg, (v + .5) / tg
            if flips[1]:
                fx = 1 - fx
            y, x = t2 + fy * h2, l2 + fx * w2  # original image
            ay, ax = (y - t1) / h1, (x - l1) / w1  # fraction of view a
            if flips[0]:
                ax = 1 - ax
            rows.append(ay * grid - .5)
            cols.append(ax * grid - .5)
    return torch.tensor(rows), torch.tensor(cols)


def test_centres_match_geometry_for_every_flip_combination():
    boxes = [(10, 20, 50, 40), (30, 5, 25, 60)]
    for flips in [(False, False), (True, False), (False, True), (True, True)]:
        _, rows, cols = _centres(boxes, flips)
        ref_r, ref_c = _brute_force(boxes, flips, 100, 4)
        torch.testing.assert_close(rows, ref_r)
        torch.testing.assert_close(cols, ref_c)


def test_same_view_reduces_to_identity_grid():
    box = (7, 9, 40, 40)
    for flip in (False, True):
        offsets, rows, cols = _centres([box, box], (flip, flip))
        grid = torch.arange(4.).repeat_interleave(4)
        torch.testing.assert_close(rows, grid)
        torch.testing.assert_close(cols, torch.arange(4.).repeat(4))
        assert not bool(offsets.relative_flip[0])


def test_lower_resolution_target_grid():
    boxes = [(10, 20, 50, 40), (30, 5, 25, 60)]
    _, rows, cols = _centres(boxes, (False, True), grid=4, target_grid=2)
    ref_r, ref_c = _brute_force(boxes, (False, True), 100, 4, target_grid=2)
    torch.testing.assert_close(rows, ref_r)
    torch.testing.assert_close(cols, ref_c)


def test_embedding_layout_and_scale_terms():
    boxes = [(0, 0, 50, 40), (0, 0, 25, 80)]
    offsets, rows, cols = _centres(boxes, (False, False))
    D = 16
    emb = relative_sincos_embed(offsets, 4, D)
    assert emb.shape == (1, 16, 2 * D)
    q = D // 4
    omega = 1. / 10000**(torch.arange(q) / q)
    torch.testing.assert_close(emb[0, :, :q], torch.sin(rows[:, None] * omega))
    torch.testing.assert_close(emb[0, :, 3 * q:4 * q],
                               torch.cos(cols[:, None] * omega))
    scale_h = 10 * torch.log(torch.tensor(25 / 50))
    torch.testing.assert_close(emb[0, 3, 4 * q:5 * q],
                               torch.sin(scale_h * omega))
    scale_w = 10 * torch.log(torch.tensor(80 / 40))
    torch.testing.assert_close(emb[0, 5, 7 * q:8 * q],
                               torch.cos(scale_w * omega))


def test_offsets_are_a_typed_structure_in_the_authors_order():
    from mmsiameseim.models.utils import CropPairOffsets
    offsets, _, _ = _centres([(10, 20, 50, 40), (30, 5, 25, 60)],
                             (False, True))
    assert isinstance(offsets, CropPairOffsets)
    assert offsets._fields == ('delta_i', 'delta_j', 'delta_h', 'delta_w',
                               'relative_flip', 'flip_delta_j')
    moved = offsets.to('meta')
    assert isinstance(moved, CropPairOffsets)
    assert all(t.device.type == 'meta' for t in moved)
    assert moved.relative_flip.dtype == torch.bool
