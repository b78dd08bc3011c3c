"""Write small COCO-2017 and LVIS-v1 style datasets from real pixels.

    python tools/dataset_converters/make_smoke_coco_lvis.py \
        [--fashion-mnist data/fashion_mnist] [--out data/smoke_det] \
        [--num-train 8] [--num-val 4] [--img-size 128] [--seed 0]

Fashion-MNIST items with exact masks pasted on Fashion-MNIST backgrounds,
in the layouts of the real datasets (see
:mod:`mmsiameseim.testing.coco_lvis`). It then prints the CPU smoke
runs of the two detection benchmarks: the configs of
``configs/benchmarks/mmdet/smoke/``, which read ``data/smoke_det`` at
128 x 128. Re-running with the same arguments does nothing.
"""
import argparse
import os.path as osp
import sys

from mmengine.config import Config

from mmsiameseim.testing.coco_lvis import make_datasets

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
SMOKE_CONFIGS = 'configs/benchmarks/mmdet/smoke/mask-rcnn_vitdet-tiny-p4-' \
    'siameseim-pre_1xb2-1e_smoke-{}-128.py'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--fashion-mnist',
        default='data/fashion_mnist',
        help='folder with the un-gzipped Fashion-MNIST files')
    parser.add_argument('--out', default='data/smoke_det')
    parser.add_argument('--num-train', type=int, default=8)
    parser.add_argument('--num-val', type=int, default=4)
    parser.add_argument('--img-size', type=int, default=128)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument(
        '--checkpoint',
        help='pretraining checkpoint for the printed smoke '
        'commands (the configs\' own: the demo\'s, '
        'work_dirs/demo/siameseim/epoch_1.pth)')
    args = parser.parse_args(argv)
    try:
        make_datasets(args.fashion_mnist, args.out, args.num_train,
                      args.num_val, args.img_size, args.seed)
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f'error: {e}')
    cfg = Config.fromfile(osp.join(ROOT, SMOKE_CONFIGS.format('coco')))
    root, size = osp.dirname(osp.normpath(cfg.data_root)), cfg.smoke_size
    if (osp.normpath(args.out), args.img_size) != (root, size[0]):
        print(f'\nNote: the smoke configs read {root} at {size[0]} x '
              f'{size[1]}; override their data_root, ann_file and sizes for '
              'this data.')
    ckpt = (f' --cfg-options model.backbone.init_cfg.checkpoint='
            f'{args.checkpoint}' if args.checkpoint else '')
    for dataset in ('coco', 'lvis-v1'):
        print(f'\nCPU smoke run on {dataset}:\n'
              f'mim train mmdet {SMOKE_CONFIGS.format(dataset)} '
              f'--work-dir work_dirs/smoke_{dataset}{ckpt}')


if __name__ == '__main__':
    main()
