"""Pictures of what pretrained backbones learned, side by side.

    python tools/visualization/visualize_features.py CHECKPOINT
        [CHECKPOINT ...] [--names a,b,...] [--config PRETRAIN_CONFIG]
        [--out DIR]
        [--study projects/claim/configs/claim_study.py] [--data-root DIR]
        [--images FILE_OR_DIR ...] [--photo-size 128] [--count 6]
        [--initial-weights]

Each checkpoint's pretraining config is read from the checkpoint (mmengine
stores it) unless ``--config`` gives it; its backbone is loaded as a frozen
mmpretrain ViT. Writes into ``--out``:

* ``pca_mosaics.png``: Fashion-MNIST test mosaics (the dense probe's) and
  the first three principal components of each model's patch features as
  RGB;
* ``pca_photos.png``: the same on real photographs (``--images``: files
  or folders; default: the sample photos that matplotlib and scikit-learn
  ship), resized to ``--photo-size`` (grey for a one-channel model; the
  position embedding is interpolated to the larger grid);
* ``attention_photos.png``: on the same photographs, the last block's
  attention of the cls token to the patches, one map per head;
* ``neighbours.png``: a few test images and their nearest training images
  by each model's frozen feature;
* ``dense_maps.png``: the dense probe's predicted patch labels beside the
  truth (the classifier fitted as the study fits it);
* ``prediction_pairs_NAME.png``, for each SiameseIM checkpoint: two-view
  pairs made by its own training pipeline (of Fashion-MNIST test images
  for a one-channel model, else of the photographs), and how well the
  predictor, reading masked view a, matches the target's feature of each
  patch of view b (cosine), drawn on view b and where view b's patches lie
  on view a.

The Fashion-MNIST pictures use the study config's protocol (feature, dense
probe settings); they are drawn for one-channel models only (said so
otherwise).
"""
import argparse
import os
import os.path as osp

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('checkpoints', nargs='+')
    p.add_argument(
        '--names',
        default=None,
        help='comma-separated names of the checkpoints (default: their '
        'folder names)')
    p.add_argument(
        '--config',
        default=None,
        help='pretraining config of every checkpoint (default: the one '
        'stored in each)')
    p.add_argument('--out', default='work_dirs/feature_pictures')
    p.add_argument('--study', default='projects/claim/configs/claim_study.py')
    p.add_argument('--data-root', default='data/fashion_mnist')
    p.add_argument(
        '--images',
        '--photos',
        dest='photos',
        nargs='*',
        default=None,
        help='photographs to draw on: files or folders (every image under '
        'a folder); default: the sample photos of matplotlib and '
        'scikit-learn')
    p.add_argument('--photo-size', type=int, default=128)
    p.add_argument('--count', type=int, default=6)
    p.add_argument(
        '--initial-weights',
        action='store_true',
        help='add a row for each checkpoint\'s initial_weights.pth (saved '
        'beside it by the demo and the study)')
    return p.parse_args(argv)


def image_paths(items):
    """Files as given; a folder gives every image under it, sorted."""
    from mmsiameseim.datasets.image_folder_files import list_image_files
    out = []
    for item in items or ():
        if osp.isdir(item):
            out += [
                osp.join(item, f)
                for f in list_image_files(item, what='--images').files
            ]
        else:
            out.append(item)
    return out


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    from projects.common.visualization.feature_report import (draw_all,
                                                              sample_photos)
    names = args.names.split(',') if args.names else [
        osp.basename(osp.dirname(osp.abspath(c))) for c in args.checkpoints
    ]
    if len(names) != len(args.checkpoints):
        raise SystemExit(f'--names: {len(names)} names for '
                         f'{len(args.checkpoints)} checkpoints')
    for path in draw_all(
            dict(zip(names, args.checkpoints)),
            args.out,
            config=args.config,
            study=args.study,
            data_root=args.data_root,
            photos=image_paths(args.photos) or sample_photos(),
            photo_size=args.photo_size,
            count=args.count,
            initial_weights=args.initial_weights):
        print(f'wrote {path}')


if __name__ == '__main__':
    main()
