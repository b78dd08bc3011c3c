"""The two-view data pipeline, ours (from a config) and the same
augmentations in torchvision, over JPEGs cut from real photographs; and
per-transform timers."""
import os
import time

import numpy as np

from .models import REPO

#: the two-view masked ImageNet pipeline config
DEFAULT_CONFIG = os.path.join(REPO, 'configs', 'pretrain', '_base_',
                              'imagenet_two_view_masked.py')


def write_jpegs(folder, count, size, seed=0):
    """``count`` JPEGs of ``size`` (w, h) cut from real photographs."""
    from PIL import Image
    from sklearn.datasets import load_sample_images
    photos = load_sample_images().images
    rng = np.random.default_rng(seed)
    width, height = size
    paths = []
    for i in range(count):
        photo = photos[i % len(photos)]
        # a random window of 50-100 % of the photo, resized to the size
        scale = rng.uniform(0.5, 1.0)
        ch, cw = int(photo.shape[0] * scale), int(photo.shape[1] * scale)
        top = rng.integers(0, photo.shape[0] - ch + 1)
        left = rng.integers(0, photo.shape[1] - cw + 1)
        img = Image.fromarray(photo[top:top + ch, left:left + cw])
        if rng.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        path = os.path.join(folder, f'{i:04d}.jpg')
        img.resize((width, height), Image.BICUBIC).save(path, quality=90)
        paths.append(path)
    return paths


def build_siameseim_pipeline(config):
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import TRANSFORMS

    import mmsiameseim  # noqa: F401
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(config)
    if 'train_pipeline' not in cfg:
        raise KeyError(f'{config} has no train_pipeline')
    return [TRANSFORMS.build(t) for t in cfg.train_pipeline]


class PILGaussianBlur:
    """Blur with a random radius, as MoCo v3 (and mmpretrain) do on PIL."""

    def __init__(self, sigma=(0.1, 2.0)):
        self.sigma = sigma

    def __call__(self, img):
        import random

        from PIL import ImageFilter
        return img.filter(
            ImageFilter.GaussianBlur(radius=random.uniform(*self.sigma)))


def build_torchvision_pipeline():
    from mmpretrain.registry import TRANSFORMS
    from PIL import Image
    from torchvision import transforms as T

    import mmsiameseim  # noqa: F401

    def view(blur_p, solarize_p):
        steps = [
            T.RandomResizedCrop(224, scale=(0.08, 1.0),
                                interpolation=T.InterpolationMode.BICUBIC),
            T.RandomHorizontalFlip(),
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2),
            T.RandomApply([PILGaussianBlur((0.1, 2.0))], p=blur_p),
        ]
        if solarize_p:
            steps.append(T.RandomSolarize(128, p=solarize_p))
        steps += [T.ToTensor(),
                  T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]
        return T.Compose(steps)

    view_a, view_b = view(1.0, 0.0), view(0.1, 0.2)
    mask = TRANSFORMS.build(dict(
        type='BlockwiseMaskGenerator', input_size=14,
        num_masking_patches=118, min_num_patches=16, fixed_count=True))

    def pipeline(path):
        with Image.open(path) as f:
            img = f.convert('RGB')
        return view_a(img), view_b(img), mask({})['mask']

    return pipeline


class Timed:
    """Wraps a transform and adds up its time under ``name``."""

    def __init__(self, transform, name, totals):
        self.transform, self.name, self.totals = transform, name, totals

    def __call__(self, results):
        t0 = time.perf_counter()
        out = self.transform(results)
        self.totals[self.name] += time.perf_counter() - t0
        return out


def add_timers(pipeline, totals):
    """Time each step, and each colour step of PerViewTransforms per view."""
    timed = []
    for t in pipeline:
        name = type(t).__name__
        for v, compose in enumerate(getattr(t, 'pipelines', [])):
            compose.transforms = [
                Timed(s, f'  view {"ab"[v]}: {_name(s)}', totals)
                for s in compose.transforms
            ]
        timed.append(Timed(t, name, totals))
    return timed


def _name(transform):
    if type(transform).__name__ == 'RandomApply':
        inner = transform.transforms.transforms
        return f'RandomApply({", ".join(type(t).__name__ for t in inner)})'
    return type(transform).__name__


def run_siameseim(pipeline, paths):
    for path in paths:
        results = dict(img_path=path)
        for t in pipeline:
            results = t(results)


def run_torchvision(pipeline, paths):
    for path in paths:
        pipeline(path)
