"""Shared helpers for the tests."""
import torch
from torch.utils.data import Dataset


def fixture_samples(fx, idx=None):
    """The fixture's inputs as DataSamples, packed like PackInputs does."""
    from mmpretrain.structures import DataSample
    inp, size = fx['inputs'], fx['config']['source_image_size']
    idx = range(inp['view_a'].shape[0]) if idx is None else idx
    samples = []
    for b in idx:
        ds = DataSample()
        ds.set_mask(inp['mask'][b])
        ds.set_field(inp['crop_boxes'][b].numpy(), 'crop_boxes')
        ds.set_field(inp['flips'][b].numpy(), 'flips')
        ds.set_field((size, size), 'ori_shape', field_type='metainfo')
        samples.append(ds)
    return samples


def tiny_siameseim_cfg(img_size=32, patch_size=8, dims=32, in_channels=3,
                       num_mask=10, **neck_overrides):
    """A tiny SiameseIM config for CPU tests."""
    grid = img_size // patch_size
    neck = dict(type='RelPosDecoderNeck', in_channels=dims, embed_dims=dims,
                grid_size=grid, projector_depth=1, predictor_depth=1,
                num_heads=2)
    neck.update(neck_overrides)
    return dict(
        type='SiameseIM',
        data_preprocessor=dict(type='SelfSupDataPreprocessor',
                               mean=[127.5] * in_channels,
                               std=[127.5] * in_channels),
        backbone=dict(type='SiameseIMViT',
                      arch=dict(embed_dims=dims, num_layers=2, num_heads=2,
                                feedforward_channels=dims * 2),
                      img_size=img_size, patch_size=patch_size,
                      in_channels=in_channels),
        neck=neck,
        head=dict(type='UniGradHead'))


def random_batch(n, img_size=32, grid=4, num_mask=10, in_channels=3,
                 seed=0):
    """Random views and well-formed geometry for ``n`` samples."""
    import numpy as np
    from mmpretrain.structures import DataSample
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    views = [torch.randn(n, in_channels, img_size, img_size, generator=g)
             for _ in range(2)]
    samples = []
    for _ in range(n):
        mask = np.zeros(grid * grid, bool)
        mask[rng.permutation(grid * grid)[:num_mask]] = True
        ds = DataSample()
        ds.set_mask(torch.from_numpy(mask.reshape(grid, grid)))
        boxes = np.array([[rng.integers(0, 20), rng.integers(0, 20), 40, 44],
                          [rng.integers(0, 20), rng.integers(0, 20), 36, 30]],
                         np.float32)
        ds.set_field(boxes, 'crop_boxes')
        ds.set_field(rng.random(2) < 0.5, 'flips')
        ds.set_field((64, 64), 'ori_shape', field_type='metainfo')
        samples.append(ds)
    return views, samples


class TwoViewSamples(Dataset):
    """Deterministic packed samples, so that only the training state can
    make two runs differ."""

    def __init__(self, n=8, nan=False):
        views, self.samples = random_batch(n, seed=3)
        self.views = [(v * 60 + 127).clamp(0, 255) for v in views]
        if nan:
            self.views[0][:] = float('nan')

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return dict(inputs=[self.views[0][i], self.views[1][i]],
                    data_samples=self.samples[i])
