"""Throughput of the two-view data pipeline per worker process.

    python tools/benchmark_pipeline.py [--images 64] [--repeats 3]
        [--image-size 500 375] [--config PATH]
        [--step-images-per-s X | --pretrain-json FILE] [--profile] [--json]

Runs in one process (no DataLoader workers) with one torch thread and
OpenCV threading off (as mmengine sets it up), so the result is the rate of
one worker. Two pipelines over the same JPEG files:

* ``siameseim``: ``train_pipeline`` of the config (default
  configs/pretrain/_base_/imagenet_two_view_masked.py), built through
  mmpretrain's TRANSFORMS: load (Pillow), two-view crop + flip, per-view
  colour, blockwise mask, packing (uint8 tensors; normalisation happens in
  the model's data preprocessor).
* ``torchvision``: the same augmentations written with torchvision on PIL
  images (MoCo-v3 style): per view ``RandomResizedCrop(224, (0.08, 1),
  bicubic)``, ``RandomHorizontalFlip``, ``RandomApply(ColorJitter(0.4, 0.4,
  0.2, 0.1), p=0.8)``, ``RandomGrayscale(0.2)``, PIL Gaussian blur with a
  radius in (0.1, 2.0) (as MoCo v3 and mmpretrain's ``GaussianBlur``) with
  p 1.0 / 0.1, ``RandomSolarize(128, p=0.2)`` on view b, ``ToTensor`` +
  ``Normalize``, plus our ``BlockwiseMaskGenerator``, so both do the same
  work (plus normalisation here).

The input is ``--images`` JPEG files of ``--image-size`` (W H; ImageNet's
typical 500 x 375 by default), written to a temporary folder from real
photographs (scikit-learn's sample images: random crops, flips and
rescales). Reports the median over ``--repeats`` passes of images/s and
ms/image, and, given the GPU step rate of the model (``--step-images-per-s``
or the ``siameseim`` row of a ``tools/benchmark_pretrain.py --json`` output
given by ``--pretrain-json``), the workers needed per GPU, ceil(step rate /
per-worker rate). ``--profile`` adds the time of each transform of our
pipeline (the colour transforms per view).
"""
import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CONFIG = os.path.join(ROOT, 'configs', 'pretrain', '_base_',
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--images', type=int, default=64)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--image-size', type=int, nargs=2, default=(500, 375),
                        metavar=('W', 'H'))
    parser.add_argument('--config', default=DEFAULT_CONFIG)
    parser.add_argument('--step-images-per-s', type=float,
                        help='GPU training throughput of the model')
    parser.add_argument('--pretrain-json',
                        help='tools/benchmark_pretrain.py --json output; '
                        'its siameseim images_per_s is the step rate')
    parser.add_argument('--profile', action='store_true',
                        help='time each transform of our pipeline')
    parser.add_argument('--json', action='store_true',
                        help='print one JSON object instead of a table')
    args = parser.parse_args(argv)
    if args.images < 1 or args.repeats < 1:
        parser.error('--images and --repeats must be >= 1')
    step_rate = args.step_images_per_s
    if args.pretrain_json:
        if step_rate is not None:
            parser.error('give --step-images-per-s or --pretrain-json, '
                         'not both')
        step_rate = step_rate_from_json(args.pretrain_json)

    import cv2
    import torch
    from mmengine.utils import ProgressBar

    # one worker process uses one core (mmengine's runner also turns
    # OpenCV's threads off)
    torch.set_num_threads(1)
    cv2.setNumThreads(0)
    ours = build_siameseim_pipeline(args.config)
    totals = defaultdict(float)
    if args.profile:
        ours = add_timers(ours, totals)
    pipelines = dict(siameseim=(run_siameseim, ours),
                     torchvision=(run_torchvision,
                                  build_torchvision_pipeline()))
    times = defaultdict(list)
    with tempfile.TemporaryDirectory() as folder:
        paths = write_jpegs(folder, args.images, tuple(args.image_size))
        np.random.seed(0)
        bar = ProgressBar(args.repeats * len(pipelines), file=sys.stderr)
        for _ in range(args.repeats):  # in turns: both see the same noise
            for name, (run, pipeline) in pipelines.items():
                t0 = time.perf_counter()
                run(pipeline, paths)
                times[name].append(time.perf_counter() - t0)
                bar.update()
        sys.stderr.write('\n')

    rows = []
    for name, ts in times.items():
        rate = args.images / statistics.median(ts)
        rows.append(dict(
            pipeline=name, images=args.images,
            image_size=list(args.image_size), repeats=args.repeats,
            images_per_s=rate, ms_per_image=1e3 / rate,
            images_per_s_min=args.images / max(ts),
            images_per_s_max=args.images / min(ts),
            workers_per_gpu=math.ceil(step_rate / rate) if step_rate
            else None))
    calls = args.images * args.repeats
    profile = {k: 1e3 * v / calls for k, v in totals.items()}
    if args.json:
        print(json.dumps(dict(rows=rows, step_images_per_s=step_rate,
                              profile_ms_per_image=profile or None)))
        return
    print(format_table(rows, step_rate, profile))


def step_rate_from_json(path):
    try:
        with open(path) as f:
            rows = json.loads(f.read().strip().splitlines()[-1])['rows']
        return next(r['images_per_s'] for r in rows
                    if r['model'] == 'siameseim')
    except (OSError, ValueError, KeyError, StopIteration) as e:
        raise SystemExit(f'--pretrain-json {path}: no siameseim images_per_s '
                         f'in a tools/benchmark_pretrain.py --json output '
                         f'({type(e).__name__}: {e})')


def format_table(rows, step_rate, profile=None):
    """Markdown table of the rows, and the profile when given."""
    head = ('pipeline', 'images/s per worker (med)', 'min-max',
            'ms/image', 'workers per GPU')
    lines = [' | '.join(head), '|'.join('---' for _ in head)]
    for r in rows:
        workers = r['workers_per_gpu'] if step_rate else '-'
        lines.append(
            f'{r["pipeline"]} | {r["images_per_s"]:.1f} | '
            f'{r["images_per_s_min"]:.1f}-{r["images_per_s_max"]:.1f} | '
            f'{r["ms_per_image"]:.1f} | {workers}')
    if step_rate:
        lines.append(f'step rate: {step_rate:.1f} images/s per GPU')
    if profile:
        lines += ['', 'transform | ms/image', '---|---']
        lines += [f'{k} | {v:.2f}' for k, v in profile.items()]
    return '\n'.join(lines)


if __name__ == '__main__':
    main()
