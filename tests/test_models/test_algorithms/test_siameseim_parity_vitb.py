"""Parity with the authors' implementation at ViT-B/16 scale (224 px,
batch 4: 784 target tokens x 768 channels per loss term).

The fixture (projects/common/tools/make_official_vitb_fixture.py) keeps the
authors' loss
and gradients of one step, their weights as a seed and shapes; the same
weights and inputs are rebuilt here without their code."""
import os

import numpy as np
import pytest
import torch

from mmsiameseim.apis import build_from_official, convert_official_state_dict
from mmsiameseim.models.utils.geometry import build_rows_first_sincos_embed
from tests.helpers import DATA, load_tool

FIXTURE = os.path.join(DATA, 'official_parity_vitb.pt')


def _our_names(official):
    """{their parameter name: tensor} -> {our name: tensor}."""
    out, skipped = convert_official_state_dict(
        dict(official, pos_embed=torch.zeros(1)))  # it copies pos_embed
    assert not skipped, skipped
    for name in ('backbone.pos_embed', 'target.module.backbone.pos_embed'):
        del out[name]
    return out


@pytest.mark.slow
def test_vit_b_loss_and_gradients_match_the_authors():
    fx = torch.load(FIXTURE, weights_only=True)
    maker = load_tool('projects/common/tools/make_official_vitb_fixture.py')
    cfg, inp, exp = fx['config'], fx['inputs'], fx['expected']
    state = maker.official_weights(cfg['seed'], fx['official_shapes'])
    grid = cfg['img_size'] // cfg['patch_size']
    state['pos_embed'] = build_rows_first_sincos_embed(grid, cfg['embed_dim'])
    model = build_from_official(
        state,
        num_heads=cfg['num_heads'],
        decoder_num_heads=cfg['decoder_num_heads'])
    view_a, view_b = maker.views(cfg['seed'], cfg)

    from mmpretrain.structures import DataSample
    samples = []
    for b in range(cfg['batch']):
        ds = DataSample()
        ds.set_mask(inp['mask'][b])
        ds.set_field(inp['crop_boxes'][b].numpy(), 'crop_boxes')
        ds.set_field(inp['flips'][b].numpy(), 'flips')
        size = cfg['source_image_size']
        ds.set_field((size, size), 'ori_shape', field_type='metainfo')
        samples.append(ds)

    loss = model.loss([view_a, view_b], samples, update_target=False)['loss']
    want = float(exp['loss'])
    assert abs(float(loss) - want) <= 2e-5 * abs(want)

    loss.backward()
    grads = {
        n: p.grad
        for n, p in model.named_parameters() if p.grad is not None
    }
    # their names -> ours (a pure renaming)
    norms, heads = _our_names(exp['grad_norm']), _our_names(exp['grad_head'])
    assert set(norms) == set(grads)
    for name, grad in grads.items():
        ref = float(norms[name])
        assert abs(float(grad.double().norm()) - ref) <= 1e-4 * ref, name
        head = grad.reshape(-1)[:heads[name].numel()]
        err = float((head - heads[name]).norm())
        assert err <= 1e-4 * max(
            float(heads[name].norm()),
            ref * np.sqrt(head.numel() / grad.numel())), name
