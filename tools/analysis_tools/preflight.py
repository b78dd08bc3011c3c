"""Preflight of a config at its real size before it is sent to a cluster.

    python tools/analysis_tools/preflight.py CONFIG [--iters N]
        [--batch-size B] [--data-root DIR] [--work-dir DIR] [--images-per-s X]
        [--num-workers W] [--cache-dir DIR] [--json] [--save]
        [--cfg-options KEY=VALUE ...]

Builds CONFIG's runner as shipped (full model and input size, its optimizer
wrapper, layer decay / paramwise settings and parameter schedulers) and
changes only the batch (1-2), the workers (0), the data (a miniature in the
config's format, or the real data under --data-root, the folder that plays
the configs' ``data/``; for an own-images config, your folder: --data-root
or a data_root given with --cfg-options, refused before training when it
holds fewer images than N x batch), the length (N iterations) and the work
dir; on a machine without CUDA, mmengine's AmpOptimWrapper (CUDA only)
trains in fp32. Runs N training steps, one validation (and test) batch where
the config has them, saves and resumes a checkpoint, and prints a report, then
one JSON object on the last line: parameters per module and in total,
input size, step time, peak memory, FLOPs per image, parameters that got no
gradient, optimizer-group problems (lr / weight decay against the config's
constructor), losses, and the whole schedule projected from the measured
images/s or --images-per-s (per device). Exit status 1 when a check fails.
--save adds the record to projects/preflight/results/preflight.json. See
docs/preflight.md.
"""
import argparse
import json
import sys

from mmengine.config import DictAction


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument(
        '--iters', type=int, default=2, help='training iterations (default 2)')
    parser.add_argument(
        '--batch-size',
        type=int,
        default=None,
        help='per step (default 1 for mmdet '
        'configs at 1024 px, else 2)')
    parser.add_argument(
        '--data-root',
        default=None,
        help="the folder that plays the configs' data/ "
        '(imagenet/, coco/, lvis_v1/, ade/, fashion_mnist/); for an '
        'own-images config (*_folder*.py) your image folder itself; '
        'default: a generated miniature')
    parser.add_argument(
        '--work-dir',
        default=None,
        help='default: a temporary folder, removed')
    parser.add_argument(
        '--images-per-s',
        type=float,
        default=None,
        help='training images/s per device for the '
        'projection (default: measured here)')
    parser.add_argument(
        '--fashion-mnist',
        default=None,
        help='un-gzipped Fashion-MNIST files (default '
        'data/fashion_mnist)')
    parser.add_argument(
        '--num-workers',
        type=int,
        default=0,
        help='DataLoader workers (default 0)')
    parser.add_argument(
        '--cache-dir',
        default=None,
        help='where the miniature data are written and '
        'reused (default: inside the work dir)')
    parser.add_argument(
        '--json', action='store_true', help='print only the JSON object')
    parser.add_argument(
        '--save',
        action='store_true',
        help='add the record to projects/preflight/results/preflight.json')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    args = parser.parse_args(argv)
    if args.iters < 1:
        parser.error(f'--iters must be >= 1, got {args.iters}')
    if args.batch_size is not None and args.batch_size < 1:
        parser.error(f'--batch-size must be >= 1, got {args.batch_size}')
    if args.images_per_s is not None and not args.images_per_s > 0:
        parser.error(f'--images-per-s must be > 0, got {args.images_per_s}')
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    from projects.preflight import (PreflightError, format_report, preflight,
                                    save_records)
    try:
        record = preflight(
            args.config,
            iters=args.iters,
            batch_size=args.batch_size,
            data_root=args.data_root,
            work_dir=args.work_dir,
            images_per_s=args.images_per_s,
            cfg_options=args.cfg_options,
            fashion_mnist=args.fashion_mnist,
            num_workers=args.num_workers,
            cache_dir=args.cache_dir)
        code = 0
    except PreflightError as error:
        record, code = error.record, 1
        record.setdefault('failures', [str(error)])
        record.setdefault('config', args.config)
    if not args.json:
        print(format_report(record))
    if args.save:
        print(f'wrote {save_records({args.config: record})}', file=sys.stderr)
    print(json.dumps(record, default=str))
    if code:
        print(
            f'preflight FAILED: {"; ".join(record["failures"])}',
            file=sys.stderr)
    return code


if __name__ == '__main__':
    sys.exit(main())
