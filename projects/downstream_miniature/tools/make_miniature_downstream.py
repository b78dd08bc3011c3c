"""Write the miniature COCO-2017, LVIS-v1 and ADE20k datasets of the
downstream study from real Fashion-MNIST pixels.

    python projects/downstream_miniature/tools/make_miniature_downstream.py \
        [--fashion-mnist data/fashion_mnist] [--out data/miniature] \
        [--num-train 3000] [--num-val 500] [--img-size 128] \
        [--holdout-fraction 0.1] [--seed 0]

Training images from Fashion-MNIST's training items, validation images from
its test items, each item at its native size (x0.75-1.5) with its exact
visible mask (see :mod:`projects.downstream_miniature.layouts` and
projects/downstream_miniature/README.md). The configs of
``configs/benchmarks/mmdet/miniature/``
and ``configs/benchmarks/mmseg/miniature/`` read ``data/miniature``. A folder
built with the same settings is reused; one with other settings, or a
partial one, is refused by name.
"""
import argparse
import sys

from projects.downstream_miniature.layouts import make_miniature_datasets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--fashion-mnist',
        default='data/fashion_mnist',
        help='folder with the un-gzipped Fashion-MNIST files')
    parser.add_argument('--out', default='data/miniature')
    parser.add_argument('--num-train', type=int, default=3000)
    parser.add_argument('--num-val', type=int, default=500)
    parser.add_argument('--img-size', type=int, default=128)
    parser.add_argument('--holdout-fraction', type=float, default=0.1)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    try:
        meta = make_miniature_datasets(args.fashion_mnist, args.out,
                                       args.num_train, args.num_val,
                                       args.img_size, args.holdout_fraction,
                                       args.seed)
    except (FileNotFoundError, FileExistsError, ValueError) as e:
        sys.exit(f'error: {e}')
    for part, c in meta['counts'].items():
        print(f'{part}: {c["images"]} images, {c["instances"]} instances '
              f'({c["hidden_dropped"]} fully hidden items dropped)')
    groups = meta['lvis_groups']
    print('LVIS groups: ' + '; '.join(f'{g}: {", ".join(groups[g])}'
                                      for g in 'rcf'))
    print(f'{meta["holdout_images"]} training images held out '
          f'(*_holdout); datasets in {args.out}')


if __name__ == '__main__':
    main()
