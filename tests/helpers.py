"""Shared helpers for the tests."""
import contextlib
import importlib.util
import io
import logging
import os
import sys

import numpy as np
import torch
from torch.utils.data import Dataset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, 'tests', 'data')
TINY_SIAMESEIM_CONFIG = os.path.join(ROOT, 'tests', 'data', 'configs',
                                     'siameseim_tiny.py')


def load_tool(relpath):
    """Import a script under ``tools/`` (e.g. ``'train.py'``) or, named from
    the root, a project's (``'projects/demo/tools/demo.py'``) as a module,
    to call it in this process instead of a fresh interpreter."""
    path = os.path.join(
        ROOT, relpath if relpath.startswith('projects/') else os.path.join(
            'tools', relpath))
    # as when it runs as a script: its folder first on sys.path
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def logged():
    """A StringIO that receives what mmengine's current logger writes
    inside the block (the logger does not propagate to pytest's capture)."""
    from mmengine.logging import MMLogger
    logger = MMLogger.get_current_instance()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


@contextlib.contextmanager
def logged_warnings():
    """A list that receives the messages mmengine's current logger writes
    at WARNING or above inside the block."""
    from mmengine.logging import MMLogger
    logger = MMLogger.get_current_instance()
    messages = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


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
        ds.set_field((size, size), 'crop_source_shape')
        samples.append(ds)
    return samples


def tiny_siameseim_cfg(img_size=None,
                       patch_size=None,
                       dims=None,
                       in_channels=None,
                       **neck_overrides):
    """The model of the tiny test config ``TINY_SIAMESEIM_CONFIG`` as a
    dict; ``img_size``, ``patch_size``, ``dims`` or ``in_channels`` change
    it (the neck's grid and widths and the normaliser follow) and
    ``neck_overrides`` replace neck options."""
    from mmengine.config import Config
    model = Config.fromfile(TINY_SIAMESEIM_CONFIG).model.to_dict()
    backbone, neck = model['backbone'], model['neck']
    if img_size is not None:
        backbone['img_size'] = img_size
    if patch_size is not None:
        backbone['patch_size'] = patch_size
    neck['grid_size'] = backbone['img_size'] // backbone['patch_size']
    if dims is not None:
        backbone['arch'].update(embed_dims=dims, feedforward_channels=dims * 2)
        neck.update(in_channels=dims, embed_dims=dims)
    if in_channels is not None:
        backbone['in_channels'] = in_channels
        model['data_preprocessor'].update(
            mean=[127.5] * in_channels, std=[127.5] * in_channels)
    neck.update(neck_overrides)
    return model


def random_batch(n, img_size=32, grid=4, num_mask=10, in_channels=3, seed=0):
    """Random views and well-formed geometry for ``n`` samples."""
    import numpy as np
    from mmpretrain.structures import DataSample
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    views = [
        torch.randn(n, in_channels, img_size, img_size, generator=g)
        for _ in range(2)
    ]
    samples = []
    for _ in range(n):
        mask = np.zeros(grid * grid, bool)
        mask[rng.permutation(grid * grid)[:num_mask]] = True
        ds = DataSample()
        ds.set_mask(torch.from_numpy(mask.reshape(grid, grid)))
        boxes = np.array([[rng.integers(0, 20),
                           rng.integers(0, 20), 40, 44],
                          [rng.integers(0, 20),
                           rng.integers(0, 20), 36, 30]], np.float32)
        ds.set_field(boxes, 'crop_boxes')
        ds.set_field(rng.random(2) < 0.5, 'flips')
        ds.set_field((64, 64), 'crop_source_shape')
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
        return dict(
            inputs=[self.views[0][i], self.views[1][i]],
            data_samples=self.samples[i])


def make_tiny_imagenet(root,
                       per_class_train=4,
                       listed_per_class=2,
                       per_class_val=4,
                       size=40):
    """An ImageNet-layout folder of 3 classes whose images differ in colour:
    ``train/<wnid>/<wnid>_<n>.JPEG``, ``val/*.JPEG`` with ``meta/val.txt``
    and a SimCLR-style ``1percent.txt`` listing some training images.

    Returns:
        list: The file names in ``1percent.txt``.
    """
    import os

    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(0)
    wnids = ['n09000001', 'n02000002', 'n05000003']  # not in label order
    colours = {
        'n02000002': (200, 40, 40),
        'n05000003': (40, 200, 40),
        'n09000001': (40, 40, 200)
    }

    def image(wnid):
        pixels = np.array(colours[wnid]) + rng.normal(0, 25, (size, size, 3))
        return Image.fromarray(pixels.clip(0, 255).astype(np.uint8))

    listed, val_lines = [], []
    os.makedirs(os.path.join(root, 'val'), exist_ok=True)
    os.makedirs(os.path.join(root, 'meta'), exist_ok=True)
    for wnid in wnids:
        os.makedirs(os.path.join(root, 'train', wnid), exist_ok=True)
        for n in range(per_class_train):
            name = f'{wnid}_{n}.JPEG'
            image(wnid).save(os.path.join(root, 'train', wnid, name))
            if n < listed_per_class:
                listed.append(name)
        label = sorted(wnids).index(wnid)
        for n in range(per_class_val):
            name = f'ILSVRC2012_val_{label}{n:04d}.JPEG'
            image(wnid).save(os.path.join(root, 'val', name))
            val_lines.append(f'{name} {label}')
    listed.sort()
    with open(os.path.join(root, '1percent.txt'), 'w') as f:
        f.write('\n'.join(listed) + '\n')
    with open(os.path.join(root, 'meta', 'val.txt'), 'w') as f:
        f.write('\n'.join(val_lines) + '\n')
    return listed


def save_resnet18_checkpoint(path, prefix='backbone.'):
    """A wrong checkpoint for ViT loaders: torchvision's ResNet-18 (random
    weights, nothing downloaded) with its keys under ``prefix``, saved as
    mmengine saves a classifier. Returns its state dict."""
    import torchvision
    state = {
        prefix + k: v
        for k, v in torchvision.models.resnet18().state_dict().items()
    }
    torch.save({'meta': {}, 'state_dict': state}, path)
    return state


def photo_crops(count, size=64, seed=0, width=None):
    """RGB uint8 crops of scikit-learn's sample photographs, ``size`` high and
    ``width`` (default: ``size``) wide, at seeded random places (one
    generator, the photos in turn)."""
    from sklearn.datasets import load_sample_images
    rng = np.random.default_rng(seed)
    photos = load_sample_images().images
    width = width or size
    for i in range(count):
        photo = photos[i % len(photos)]
        top = rng.integers(0, photo.shape[0] - size)
        left = rng.integers(0, photo.shape[1] - width)
        yield np.ascontiguousarray(photo[top:top + size, left:left + width])
