"""Deterministic weights and inputs of the ViT-B parity fixture.

``projects/common/tools/make_official_vitb_fixture.py`` runs one training step
of the
authors' SiameseIM with these weights and inputs and stores only the
parameter names and shapes, the masks and the results (their state dict is
about 700 MB); the parity test rebuilds the same weights and views from the
fixture's seed with these functions, without their code.
"""
import math
from collections import OrderedDict

import numpy as np
import torch

FIXED = ('pos_embed', 'decoder_pos_embed')  # sin-cos tables, not drawn


def official_weights(
        seed: int,
        shapes: 'OrderedDict[str, tuple]') -> 'OrderedDict[str, torch.Tensor]':
    """Deterministic weights for the authors' parameter names and shapes
    (the fixed tables in ``FIXED`` excluded), drawn in the given order:

    matrices and tokens ``N(0, 1 / fan_in)``, 1-D weights ``1 + N(0, 0.1)``,
    biases ``N(0, 0.02)``, BatchNorm running statistics at their defaults.
    """
    g = torch.Generator().manual_seed(seed)
    out = OrderedDict()
    for name, shape in shapes.items():
        shape = tuple(shape)
        if name in FIXED:
            continue
        if name.endswith('running_mean'):
            out[name] = torch.zeros(shape)
        elif name.endswith('running_var'):
            out[name] = torch.ones(shape)
        elif name.endswith('num_batches_tracked'):
            out[name] = torch.zeros(shape, dtype=torch.long)
        elif len(shape) >= 2:
            fan_in = math.prod(shape[1:])
            out[name] = torch.randn(shape, generator=g) / math.sqrt(fan_in)
        elif name.endswith('weight'):
            out[name] = 1 + 0.1 * torch.randn(shape, generator=g)
        else:
            out[name] = 0.02 * torch.randn(shape, generator=g)
    return out


def views(seed: int, cfg: dict) -> tuple:
    """The two normalised views of the step."""
    g = torch.Generator().manual_seed(seed + 1)
    shape = (cfg['batch'], 3, cfg['img_size'], cfg['img_size'])
    return torch.randn(shape, generator=g), torch.randn(shape, generator=g)


def crops(seed: int, cfg: dict) -> tuple:
    """Crop boxes (B, 2, 4: top, left, h, w in the unflipped source) and
    flips (B, 2); sample 0 has exactly one view flipped, sample 1 both."""
    rng = np.random.default_rng(seed)
    size = cfg['source_image_size']
    boxes = np.zeros((cfg['batch'], 2, 4), np.float32)
    for b in range(cfg['batch']):
        for v in range(2):
            h, w = rng.integers(size // 4, size + 1, 2)
            top, left = rng.integers(0, size - h + 1), \
                rng.integers(0, size - w + 1)
            boxes[b, v] = top, left, h, w
    flips = rng.random((cfg['batch'], 2)) < 0.5
    flips[0] = True, False
    flips[1] = True, True
    return torch.from_numpy(boxes), torch.from_numpy(flips)
