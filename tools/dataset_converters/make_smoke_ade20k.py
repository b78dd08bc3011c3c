"""Write a small segmentation dataset in ADE20k's on-disk layout.

    python tools/dataset_converters/make_smoke_ade20k.py \
        [--fashion-mnist data/fashion_mnist] [--out data/smoke] \
        [--num-train 64] [--num-val 16] [--seed 0]

Real Fashion-MNIST items pasted on Fashion-MNIST backgrounds, with exact
annotations (see :mod:`mmsiameseim.testing.ade20k`), written to
``OUT/ade/ADEChallengeData2016``: the data of the CPU smoke config
``configs/benchmarks/mmseg/smoke/``.
"""
import argparse
import sys

from mmsiameseim.testing.ade20k import make_smoke_ade20k


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--fashion-mnist',
        default='data/fashion_mnist',
        help='directory of the un-gzipped Fashion-MNIST files')
    parser.add_argument(
        '--out',
        default='data/smoke',
        help='writes OUT/ade/ADEChallengeData2016')
    parser.add_argument('--num-train', type=int, default=64)
    parser.add_argument('--num-val', type=int, default=16)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    try:
        root = make_smoke_ade20k(args.fashion_mnist, args.out, args.num_train,
                                 args.num_val, args.seed)
    except FileNotFoundError as e:
        sys.exit(str(e))
    print(f'wrote {args.num_train} training and {args.num_val} validation '
          f'images to {root}')


if __name__ == '__main__':
    main()
