"""Throughput of the two-view data pipeline per worker process.

    python projects/speed/tools/pipeline.py [--images 64] [--large 4]
        [--repeats 3] [--image-size 500 375] [--config PATH]
        [--official-repo /tmp/sim-official]
        [--step-images-per-s X | --pretrain-json FILE] [--profile]
        [--workers 1 2] [--write] [--json]

Runs in one process with one torch thread and OpenCV threading off (as
mmengine sets up a DataLoader worker), so each rate is that of one worker.
Over the same JPEG files, in turns (every pass of every pipeline sees the
same machine load), it times:

* ``before``: the ImageNet ``train_pipeline`` as it was before the Pillow
  rewrite (``projects.speed.pipeline.BEFORE_PIPELINE``);
* ``after``: the ``train_pipeline`` of ``--config`` (default
  configs/pretrain/_base_/imagenet_two_view_masked.py);
* ``deviceaug-cpu``: the CPU part of the accelerator option
  (configs/pretrain/siameseim-deviceaug_*.py: decode, crop, resize, mask,
  pack; flips and colour then run batched on the device, not timed here);
* ``authors``: the authors' ``DataAugmentationForSIM`` and their
  ``MaskingGenerator`` from ``--official-repo`` (a clone of
  OpenGVLab/Siamese-Image-Modeling, imported with
  projects/common/authors/code.py's shims), behind their ImageFolder loader;
  left out, with a note, when the clone is missing;
* ``torchvision``: the same augmentations written with torchvision.

The JPEGs (quality 90) are cut from real photographs (scikit-learn's and
matplotlib's sample photos): ``--images`` of ``--image-size`` (ImageNet's
typical 500 x 375) and ``--large`` of ``--large-size``. Reports the median
over ``--repeats`` passes of images/s and ms/image, and, given the GPU step
rate (``--step-images-per-s``, or the ``siameseim`` row of a
``projects/speed/tools/pretrain.py --json`` output given by
``--pretrain-json``), the workers per GPU: ceil(step rate / per-worker
rate). ``--profile`` adds the time of each transform of our pipelines;
``--workers N ...`` the images/s of a DataLoader over ``after`` with N
worker processes. ``--write`` writes projects/speed/results/pipeline.json.
"""
import argparse
import json
import os
import sys

from projects.speed import pipeline as P
from projects.speed.options import positive_int

DEFAULT_OFFICIAL = '/tmp/sim-official'


def build_authors_pipeline(repo):
    """Their loader, ``DataAugmentationForSIM`` and mask generator as a ``path
    -> sample`` callable (as their ImagenetWithMask does)."""
    import types

    from projects.common import authors
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
        help='projects/speed/tools/pretrain.py --json output; '
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
        help='write projects/speed/results/pipeline.json')
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
        step_rate = P.step_rate_from_json(args.pretrain_json)
        source = f'siameseim row of {args.pretrain_json}'

    from projects.common import authors as authors_siameseim
    problem = authors_siameseim.checkout_problem(args.official_repo) \
        if args.official_repo else 'not asked for (--official-repo "")'
    authors = problem or build_authors_pipeline(args.official_repo)
    data = P.measure(args, step_rate, source, authors)
    if args.write:
        from projects.common.results import write_results
        path = write_results('pipeline', data)
        print(f'wrote {path}', file=sys.stderr)
    if args.json:
        print(json.dumps(data))
        return
    print(P.render(dict(data=data)))


if __name__ == '__main__':
    main()
