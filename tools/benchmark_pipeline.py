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

from mmsiameseim_lab.benchmark.pipeline import (DEFAULT_CONFIG, add_timers,
                                            build_siameseim_pipeline,
                                            build_torchvision_pipeline,
                                            run_siameseim, run_torchvision,
                                            write_jpegs)
from mmsiameseim_lab.benchmark.options import positive_int


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--images', type=positive_int, default=64)
    parser.add_argument('--repeats', type=positive_int, default=3)
    parser.add_argument('--image-size', type=positive_int, nargs=2, default=(500, 375),
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
    if not os.path.isfile(args.config):
        parser.error(f'--config {args.config}: no such file')
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
    except (OSError, ValueError, KeyError, IndexError, TypeError,
            StopIteration) as e:
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
