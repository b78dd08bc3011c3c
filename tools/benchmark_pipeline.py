"""Throughput of the two-view data pipeline per worker process.

    python tools/benchmark_pipeline.py [--images 64] [--large 4]
        [--repeats 3] [--image-size 500 375] [--config PATH]
        [--official-repo /tmp/sim-official]
        [--step-images-per-s X | --pretrain-json FILE] [--profile]
        [--workers 1 2] [--write] [--json]

Runs in one process with one torch thread and OpenCV threading off (as
mmengine sets up a DataLoader worker), so each rate is that of one worker.
Over the same JPEG files, in turns (every pass of every pipeline sees the
same machine load), it times:

* ``before``: the ImageNet ``train_pipeline`` as it was before the Pillow
  rewrite (``mmsiameseim_lab.benchmark.pipeline.BEFORE_PIPELINE``);
* ``after``: the ``train_pipeline`` of ``--config`` (default
  configs/pretrain/_base_/imagenet_two_view_masked.py);
* ``deviceaug-cpu``: the CPU part of the accelerator option
  (configs/pretrain/siameseim-deviceaug_*.py: decode, crop, resize, mask,
  pack; flips and colour then run batched on the device, not timed here);
* ``authors``: the authors' ``DataAugmentationForSIM`` and their
  ``MaskingGenerator`` from ``--official-repo`` (a clone of
  OpenGVLab/Siamese-Image-Modeling, imported with tools/authors_siameseim.py's
  shims), behind their ImageFolder loader; left out, with a note, when the
  clone is missing;
* ``torchvision``: the same augmentations written with torchvision.

The JPEGs (quality 90) are cut from real photographs (scikit-learn's and
matplotlib's sample photos): ``--images`` of ``--image-size`` (ImageNet's
typical 500 x 375) and ``--large`` of ``--large-size``. Reports the median
over ``--repeats`` passes of images/s and ms/image, and, given the GPU step
rate (``--step-images-per-s``, or the ``siameseim`` row of a
``tools/benchmark_pretrain.py --json`` output given by
``--pretrain-json``), the workers per GPU: ceil(step rate / per-worker
rate). ``--profile`` adds the time of each transform of our pipelines;
``--workers N ...`` the images/s of a DataLoader over ``after`` with N
worker processes. ``--write`` writes docs/results/pipeline.json.
"""
import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mmsiameseim_lab.benchmark import pipeline as P  # noqa: E402
from mmsiameseim_lab.benchmark.options import positive_int  # noqa: E402

DEFAULT_OFFICIAL = '/tmp/sim-official'
CONDITIONS = (
    'one process, 1 torch thread, OpenCV threads off (one DataLoader '
    'worker); the pipelines take their timed passes in turns over the same '
    'files, so all see the same load; the machine was shared with other '
    'jobs while measuring, so absolute rates are low and noisy and the '
    'ratios within one run are the comparable figures')


def build_authors_pipeline(repo):
    """Their loader, ``DataAugmentationForSIM`` and mask generator as a ``path
    -> sample`` callable (as their ImagenetWithMask does)."""
    import types

    import authors_siameseim as authors
    try:  # their main_pretrain imports tensorboard's SummaryWriter
        import torch.utils.tensorboard  # noqa: F401
    except ImportError:
        sys.modules['torch.utils.tensorboard'] = types.SimpleNamespace(
            SummaryWriter=None)
    main_pretrain = authors.import_main_pretrain(repo)
    from torchvision.datasets.folder import default_loader
    from util.masking_generator import MaskingGenerator
    transform = main_pretrain.DataAugmentationForSIM(
        argparse.Namespace(input_size=224, crop_min=0.08))
    masks = MaskingGenerator((14, 14),
                             118,
                             min_num_patches=16,
                             fixed_num_masking_patches=True)

    def pipeline(path):
        return transform(default_loader(path)), masks()

    return pipeline


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--images', type=positive_int, default=64)
    parser.add_argument(
        '--large', type=int, default=4, help='extra JPEGs of --large-size')
    parser.add_argument('--repeats', type=positive_int, default=3)
    parser.add_argument(
        '--image-size',
        type=positive_int,
        nargs=2,
        default=(500, 375),
        metavar=('W', 'H'))
    parser.add_argument(
        '--large-size',
        type=positive_int,
        nargs=2,
        default=(1600, 1200),
        metavar=('W', 'H'))
    parser.add_argument('--config', default=P.DEFAULT_CONFIG)
    parser.add_argument(
        '--device-config',
        default=P.DEVICE_CONFIG,
        help="the accelerator option's config ('' leaves "
        'its CPU part out)')
    parser.add_argument(
        '--official-repo',
        default=DEFAULT_OFFICIAL,
        help="a clone of the authors' repository ('' "
        'leaves their pipeline out)')
    parser.add_argument(
        '--step-images-per-s',
        type=float,
        help='GPU training throughput of the model')
    parser.add_argument(
        '--pretrain-json',
        help='tools/benchmark_pretrain.py --json output; '
        'its siameseim images_per_s is the step rate')
    parser.add_argument(
        '--step-rate-source',
        help='where --step-images-per-s comes from (an '
        'assumption, a measurement), for the results file')
    parser.add_argument(
        '--profile',
        action='store_true',
        help='time each transform of our pipelines')
    parser.add_argument(
        '--workers',
        type=positive_int,
        nargs='*',
        default=[],
        help='DataLoader worker counts to time')
    parser.add_argument(
        '--write',
        action='store_true',
        help='write docs/results/pipeline.json')
    parser.add_argument(
        '--json',
        action='store_true',
        help='print one JSON object instead of a table')
    args = parser.parse_args(argv)
    for opt in ('config', 'device_config'):
        path = getattr(args, opt)
        if path and not os.path.isfile(path):
            parser.error(f'--{opt.replace("_", "-")} {path}: no such file')
    if args.large < 0:
        parser.error(f'--large must be >= 0, got {args.large}')
    step_rate = args.step_images_per_s
    source = args.step_rate_source or 'given'
    if args.pretrain_json:
        if step_rate is not None:
            parser.error('give --step-images-per-s or --pretrain-json, '
                         'not both')
        step_rate = step_rate_from_json(args.pretrain_json)
        source = f'siameseim row of {args.pretrain_json}'

    import cv2
    import torch
    from mmengine.utils import ProgressBar

    import authors_siameseim as authors

    torch.set_num_threads(1)
    cv2.setNumThreads(0)
    notes = []
    steps = dict(
        before=P.BEFORE_PIPELINE, after=P.config_pipeline(args.config))
    if args.device_config:
        steps['deviceaug-cpu'] = P.config_pipeline(args.device_config)
    totals = {name: defaultdict(float) for name in steps}
    entries = {}
    for name, cfg in steps.items():
        built = P.build_pipeline(cfg)
        if args.profile:
            built = P.add_timers(built, totals[name])
        entries[name] = (P.run_mm, built)
    problem = authors.checkout_problem(args.official_repo) \
        if args.official_repo else 'not asked for (--official-repo "")'
    if problem:
        notes.append(f'authors: left out: {problem}')
        print(
            f'benchmark_pipeline: the authors\' pipeline is left out: '
            f'{problem}',
            file=sys.stderr)
    else:
        entries['authors'] = (P.run_callable,
                              build_authors_pipeline(args.official_repo))
    entries['torchvision'] = (P.run_callable, P.build_torchvision_pipeline())

    with tempfile.TemporaryDirectory() as folder:
        paths = P.write_jpegs(
            folder,
            args.images,
            args.image_size,
            large=args.large,
            large_size=args.large_size)
        np.random.seed(0)
        bar = ProgressBar(args.repeats * len(entries), file=sys.stderr)
        times = P.time_interleaved(
            entries, paths, args.repeats, progress=bar.update)
        sys.stderr.write('\n')
        scaling = P.worker_scaling(steps['after'], paths, args.workers) \
            if args.workers else []

    rows = P.rate_rows(times, len(paths), step_rate)
    # the timed passes and the warm-up's (its first 4 images)
    calls = len(paths) * args.repeats + min(len(paths), 4)
    profile = {
        name: {
            k: 1e3 * v / calls
            for k, v in t.items()
        }
        for name, t in totals.items() if t
    }
    data = dict(
        rows=rows,
        paired_ratios=P.paired_ratios(times),
        images=args.images,
        image_size=list(args.image_size),
        large=args.large,
        large_size=list(args.large_size),
        jpeg_quality=90,
        repeats=args.repeats,
        step_images_per_s=step_rate,
        step_rate_source=source if step_rate else None,
        profile_ms_per_image=profile or None,
        workers=scaling,
        cpu_count=os.cpu_count(),
        conditions=CONDITIONS,
        notes=notes)
    if args.write:
        from mmsiameseim_lab.results import write_results
        path = write_results('pipeline', data)
        print(f'wrote {path}', file=sys.stderr)
    if args.json:
        print(json.dumps(data))
        return
    print(P.render(dict(data=data)))


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
    """Markdown of the rows (and the profile), as the results renderer writes
    it."""
    return P.render(
        dict(
            data=dict(
                rows=rows,
                step_images_per_s=step_rate,
                profile_ms_per_image=profile)))


if __name__ == '__main__':
    main()
