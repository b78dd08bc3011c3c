"""Embed every image of a folder with a pretrained backbone.

    python tools/evaluation/extract_features.py CHECKPOINT --images DIR \
        --out FILE
        [--config PRETRAIN_CONFIG] [--feature cls_token|avg_featmap|
        patch_tokens] [--size N] [--crop-fraction 0.875] [--batch-size 64]
        [--float16] [--final-norm] [--plot]

CHECKPOINT is a SiameseIM or mmpretrain ViT checkpoint (its pretraining
config is read from it, as mmengine's Runner stores it, unless ``--config``
gives it); a config file (``.py``) instead embeds with the random initial
weights (a floor). Every image under DIR (recursively; every image mode,
through the strict loader) is resized (short side to size / crop-fraction,
bicubic) and centre-cropped to ``--size`` (default: the backbone's own).

Writes ``FILE`` (``.npz``): ``features`` (N x C, or N x L x C patch tokens),
``files`` (the N paths relative to DIR, in order) and ``skipped`` (files that
are not readable images, with the reason: named on the console too, never
dropped silently). A killed run continues where it stopped. ``--plot`` also
draws ``FILE`` with ``.png``: a 2-D map (UMAP when ``umap-learn`` is
installed, else t-SNE), coloured by first-level sub-folder.
"""
import argparse
import os.path as osp
import sys


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        'checkpoint',
        help='checkpoint, or a config (.py) for '
        'the random initial weights')
    p.add_argument('--images', required=True, help='image folder')
    p.add_argument('--out', required=True, help='output file (.npz)')
    p.add_argument(
        '--config',
        default=None,
        help='pretraining config (default: the one stored in the '
        'checkpoint)')
    p.add_argument(
        '--feature',
        default='cls_token',
        choices=('cls_token', 'avg_featmap', 'patch_tokens'),
        help='cls token, layer-normalised mean of the patch tokens, or '
        'every patch token (N x L x C)')
    p.add_argument(
        '--final-norm',
        action='store_true',
        help='apply the backbone\'s final LayerNorm first')
    p.add_argument('--size', type=int, default=None)
    p.add_argument('--crop-fraction', type=float, default=0.875)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--float16', action='store_true')
    p.add_argument('--plot', action='store_true')
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    import mmsiameseim  # noqa: F401
    from mmsiameseim.datasets.image_folder_files import list_image_files
    from mmsiameseim.evaluation import checkpoint_or_config, frozen_vit
    from mmsiameseim.evaluation.folder_embeddings import (embed_folder,
                                                          folder_classes)
    out = args.out if args.out.endswith('.npz') else args.out + '.npz'
    try:
        checkpoint, cfg = checkpoint_or_config(args.checkpoint, args.config)
    except FileNotFoundError as e:
        sys.exit(str(e))
    model_cfg = cfg.model
    if checkpoint is None:
        print(f'{args.checkpoint}: a config: embedding with the random '
              'initial weights')
    backbone, mean, std = frozen_vit(checkpoint, model_cfg, args.final_norm)
    size = args.size or model_cfg.backbone.get('img_size', 224)
    listing = list_image_files(args.images, what='--images')
    if listing.others:
        print(f'{len(listing.others)} files under {args.images} are not '
              f'images by their extension (e.g. {listing.others[0]}): left '
              'out')
    result = embed_folder(
        backbone,
        mean,
        std,
        args.images,
        listing.files,
        out,
        size=size,
        feature=args.feature,
        crop_fraction=args.crop_fraction,
        batch_size=args.batch_size,
        float16=args.float16,
        checkpoint=checkpoint)
    skipped = result['skipped']
    print(f'wrote {out}: {len(result["files"])} images, features '
          f'{tuple(result["features"].shape)} '
          f'{result["features"].dtype}' +
          (f'; {len(skipped)} skipped (not readable images): ' +
           ', '.join(skipped[:5, 0]) if len(skipped) else ''))
    if args.plot:
        from mmsiameseim.evaluation.embedding_map import plot_embedding_map
        names, classes = folder_classes(result['files'].tolist())
        feats = result['features']
        feats = feats.mean(1) if feats.ndim == 3 else feats
        png = out[:-len('.npz')] + '.png'
        plot_embedding_map(
            feats,
            png,
            classes if len(names) > 1 else None,
            names,
            title=osp.basename(args.images.rstrip('/')))
        print(f'wrote {png}')
    return out


if __name__ == '__main__':
    main()
