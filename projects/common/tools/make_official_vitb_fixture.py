"""Record one ViT-B/16 training step of the authors' SiameseIM, small.

    python projects/common/tools/make_official_vitb_fixture.py --official-repo
    PATH \\
        [--out tests/data/official_parity_vitb.pt] [--seed 0]

The step runs their ``SiameseIMViT`` (from your clone of
OpenGVLab/Siamese-Image-Modeling; nothing of it is shipped) at the size of
their ViT-B launch script: 224 px, patch 16, 768 wide, 12 blocks and heads,
projector 2 and predictor 4 BatchNorm blocks with 16 heads, lambda 0.02,
batch 4, fp32, training mode, no momentum update in the step.

Its weights are not stored (their state dict is about 700 MB): every
tensor is drawn by :mod:`projects.common.parity_fixture` from ``--seed``
and the parameter names and shapes kept in the fixture, except the two fixed
sin-cos tables, which equal :func:`build_rows_first_sincos_embed` (checked
here).
The views are drawn from ``seed + 1``; the masks (their ``MaskingGenerator``,
118 of 196 patches), crop boxes and flips are stored. A test rebuilds the
same weights and inputs without their code
(``tests/test_models/test_algorithms/test_siameseim_parity_vitb.py``).

Stored (about 0.4 MB): ``config``, ``official_shapes`` (name -> shape, in
drawing order), ``inputs`` (``mask``, ``crop_boxes``, ``flips``,
``official_rel_pos``), ``expected``: ``loss`` (their returned loss),
``grad_norm`` (name -> norm of its gradient, every trainable tensor) and
``grad_head`` (name -> the first 256 values of the flattened gradient).
"""
import argparse
import os
import random
import sys
from collections import OrderedDict

import numpy as np
import torch

from projects.common.parity_fixture import (FIXED, crops, official_weights,
                                            views)

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONFIG = dict(
    img_size=224,
    patch_size=16,
    embed_dim=768,
    depth=12,
    num_heads=12,
    decoder_num_heads=16,
    projector_depth=2,
    predictor_depth=4,
    neg_weight=0.02,
    batch=4,
    num_masking_patches=118,
    min_mask_patches=16,
    source_image_size=320)
GRAD_HEAD = 256


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--official-repo',
        required=True,
        help='root of a clone of '
        'OpenGVLab/Siamese-Image-Modeling')
    parser.add_argument(
        '--out',
        default=os.path.join(ROOT, 'tests', 'data', 'official_parity_vitb.pt'))
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    from mmsiameseim.models.utils.geometry import build_rows_first_sincos_embed
    from projects.common import authors
    cfg = dict(CONFIG, seed=args.seed)
    torch.manual_seed(args.seed)
    model = authors.build_model(
        args.official_repo,
        cfg['embed_dim'],
        cfg['depth'],
        cfg['num_heads'],
        cfg['img_size'],
        cfg['patch_size'],
        decoder_heads=cfg['decoder_num_heads'],
        args=authors.model_args(
            cfg['embed_dim'],
            projector_depth=cfg['projector_depth'],
            predictor_depth=cfg['predictor_depth'],
            neg_weight=cfg['neg_weight']))
    state = model.state_dict()
    shapes = OrderedDict((k, list(v.shape)) for k, v in state.items())
    grid = cfg['img_size'] // cfg['patch_size']
    for name in FIXED:  # the test rebuilds them with our function
        ours = build_rows_first_sincos_embed((grid, grid),
                                             state[name].shape[-1])
        if not torch.allclose(
                ours.reshape(state[name].shape), state[name], atol=1e-6):
            sys.exit(f'their {name} is not our rows-first sin-cos table')
    model.load_state_dict(official_weights(args.seed, shapes), strict=False)
    model.train()

    from util.masking_generator import MaskingGenerator  # their repo
    random.seed(args.seed)
    gen = MaskingGenerator((grid, grid),
                           cfg['num_masking_patches'],
                           min_num_patches=cfg['min_mask_patches'],
                           fixed_num_masking_patches=True)
    mask = torch.from_numpy(np.stack([gen()
                                      for _ in range(cfg['batch'])])).bool()
    boxes, flips = crops(args.seed, cfg)
    size = cfg['source_image_size']
    data = authors.batch(boxes.numpy(), flips.numpy(), mask.numpy(),
                         np.full(cfg['batch'], float(size)), cfg['img_size'],
                         'cpu')
    x1, x2 = views(args.seed, cfg)
    loss, _ = model(x1, x2, data['rel_pos'], 1.0, False, mask=mask)
    loss.backward()
    grad_norm, grad_head = OrderedDict(), OrderedDict()
    for name, p in model.named_parameters():
        if p.grad is not None:
            g = p.grad.detach().double()
            grad_norm[name] = g.norm()
            grad_head[name] = p.grad.detach().reshape(-1)[:GRAD_HEAD].clone()
    rel_pos = dict(
        zip(authors.REL_POS_ORDER, [t.clone() for t in data['rel_pos']]))
    fixture = dict(
        config=cfg,
        official_shapes=shapes,
        inputs=dict(
            mask=mask, crop_boxes=boxes, flips=flips,
            official_rel_pos=rel_pos),
        expected=dict(
            loss=loss.detach().double(),
            grad_norm=grad_norm,
            grad_head=grad_head))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save(fixture, args.out)
    print(f'loss {float(loss):.8f}; {len(grad_norm)} gradients; '
          f'wrote {args.out} ({os.path.getsize(args.out) / 1e6:.2f} MB)')


if __name__ == '__main__':
    main()
