"""Write a tiny ImageNet-protocol dataset from real Fashion-MNIST pixels.

    python tools/dataset_converters/make_smoke_imagenet.py [--out data/smoke]

ImageNet (train/val lists, a SimCLR-style 1 % list), ImageNet-A, -R,
-Sketch and -C layouts under ``--out`` (see
:mod:`mmsiameseim.testing.imagenet`), so that every benchmark config
of configs/benchmarks/mmpretrain/ can run end to end on a CPU. Rerunning
with the same arguments does nothing.
"""
import argparse
import sys

from mmsiameseim.testing.imagenet import make_smoke_imagenet


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--fashion-mnist', default='data/fashion_mnist')
    parser.add_argument('--out', default='data/smoke')
    parser.add_argument('--img-size', type=int, default=32)
    parser.add_argument('--train-per-class', type=int, default=4)
    parser.add_argument(
        '--test-per-class',
        type=int,
        default=2,
        help='per class in val, A, R and Sketch')
    parser.add_argument(
        '--c-per-class',
        type=int,
        default=1,
        help='per class, corruption and severity')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    for k in ('img_size', 'train_per_class', 'test_per_class', 'c_per_class'):
        if getattr(args, k) < 1:
            parser.error(f'--{k.replace("_", "-")} must be >= 1')
    written = make_smoke_imagenet(args.fashion_mnist, args.out, args.img_size,
                                  args.train_per_class, args.test_per_class,
                                  args.c_per_class, args.seed)
    if not written:
        print(f'{args.out} is up to date')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except FileNotFoundError as e:
        sys.exit(f'error: {e}')
