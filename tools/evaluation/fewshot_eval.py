"""1 % few-shot: L2-regularised logistic regression on frozen features.

    python tools/evaluation/fewshot_eval.py CONFIG --checkpoint CKPT
        [--data-root data/imagenet] [--subset-list data/imagenet/1percent.txt]
        [--cache-dir work_dirs/fewshot_features] [--c-grid 1,10,100]
        [--cv-folds 3] [--batch-size 128] [--device cuda]
        [--precision fp32|bf16|fp16] [--out res.json]
        [--cfg-options KEY=VALUE ...]

CONFIG describes the backbone and the two datasets (e.g.
vit-base-p16_siameseim-pre_1percent-logreg_in1k.py in
configs/benchmarks/mmpretrain/):
``train_dataloader.dataset`` is the labelled subset, ``test_dataloader.
dataset`` the evaluation set, each with its own (augmentation-free)
pipeline, and ``fewshot_cfg`` the C grid and folds. CKPT is any checkpoint
whose backbone sits under ``backbone.`` (ours, or the output of
tools/model_converters/mmsiameseim_to_mmpretrain.py).

Features are cached per split in --cache-dir, keyed by the checkpoint
(path, size, modification time), the model and pipeline config and the
list of images, so a second run with another --c-grid or --cv-folds only
refits the classifier. Without --checkpoint (random init) nothing is
cached. A damaged cache file is reported and extracted again; ``--out`` is
written atomically; bad checkpoints and data are refused (exit status 1)
with a message naming them.
"""
import argparse
import os
import os.path as osp
import sys

import torch
from mmengine.config import Config, DictAction


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument(
        '--checkpoint',
        default=None,
        help='backbone under backbone.; none = random init')
    parser.add_argument(
        '--data-root',
        default=None,
        help='ImageNet root of both splits (overrides config)')
    parser.add_argument(
        '--subset-list',
        default=None,
        help='the 1percent.txt list (overrides config)')
    parser.add_argument(
        '--cache-dir',
        default='work_dirs/fewshot_features',
        help="feature cache; 'none' disables it")
    parser.add_argument(
        '--c-grid',
        default=None,
        help='comma-separated inverse L2 strengths C '
        '(default: fewshot_cfg.c_grid)')
    parser.add_argument('--cv-folds', type=int, default=None)
    parser.add_argument('--batch-size', type=int, default=None)
    parser.add_argument(
        '--device', default=None, help='default: cuda if available, else cpu')
    parser.add_argument(
        '--precision',
        default='fp32',
        choices=['fp32', 'bf16', 'fp16'],
        help='feature extraction: fp32 (no autocast) or '
        'bf16 / fp16 autocast')
    parser.add_argument('--out', default=None, help='write results as JSON')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        run(args)
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f'error: {e}')


def run(args):
    from mmpretrain.registry import DATASETS

    import mmsiameseim  # noqa: F401
    from mmsiameseim.atomic_io import atomic_json
    from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                        cache_digest, cached_features,
                                        extract_features, file_identity,
                                        logistic_regression_accuracy)
    from mmsiameseim.evaluation.linear_probe import never_download
    from mmsiameseim.precision import precision_from_flag
    precision = precision_from_flag(args.precision)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    never_download(cfg)
    splits = dict(train=cfg.train_dataloader, test=cfg.test_dataloader)
    for loader in splits.values():
        if args.data_root:
            loader.dataset.data_root = args.data_root
    if args.subset_list:
        splits['train'].dataset.subset_file = osp.abspath(args.subset_list)
    fewshot_cfg = cfg.get('fewshot_cfg', {})
    c_grid = ([float(c) for c in args.c_grid.split(',')]
              if args.c_grid else list(fewshot_cfg.get('c_grid', [1.])))
    folds = args.cv_folds or fewshot_cfg.get('cv_folds', 3)
    device = args.device or ('cuda' if torch.cuda.is_available() else 'cpu')
    cache_dir = None if args.cache_dir == 'none' else args.cache_dir
    ckpt_id = file_identity(args.checkpoint)
    if ckpt_id is None and cache_dir is not None:
        print('no checkpoint: a randomly initialised backbone, whose '
              'features are not cached')
        cache_dir = None

    model = None
    features = {}
    for split, loader in splits.items():
        dataset_cfg = loader.dataset.to_dict()
        # listing the samples checks every file and keys the cache
        samples = DATASETS.build(
            dict(dataset_cfg, pipeline=[], serialize_data=False)).data_list
        print(f'{split}: {len(samples)} images')
        key = dict(
            checkpoint=ckpt_id,
            model=cfg.model.to_dict(),
            precision=precision,
            pipeline=dataset_cfg['pipeline'],
            samples=cache_digest([(s['img_path'], s['gt_label'])
                                  for s in samples]))

        def extract(loader=loader, dataset_cfg=dataset_cfg, split=split):
            nonlocal model
            if model is None:
                model = build_frozen_backbone_model(cfg,
                                                    args.checkpoint).to(device)
            return extract_features(
                model,
                dataset_cfg,
                dataset_cfg['pipeline'],
                batch_size=args.batch_size or loader.get('batch_size', 128),
                desc=f'{split} features',
                precision=precision)

        features[split] = cached_features(cache_dir, split, key, extract)

    (x, y), (xt, yt) = features['train'], features['test']
    lambdas = [1. / (c * len(y)) for c in c_grid]
    res = logistic_regression_accuracy(
        x, y, xt, yt, l2_strengths=lambdas, folds=folds)
    best_c = c_grid[lambdas.index(res['l2'])]
    print(f'\n{"C":>10} | {"lambda":>10} | CV top-1 on the subset '
          f'({folds} folds)')
    for c, lam in zip(c_grid, lambdas):
        mark = '  <- chosen' if c == best_c else ''
        print(f'{c:>10g} | {lam:>10.3g} | {res["cv_top1"][lam]:6.2f} %{mark}')
    print(f'\nfew-shot top-1 {res["top1"]:.2f} % (C={best_c:g}, '
          f'{len(y)} labelled / {len(yt)} test images)')
    if args.out:
        result = dict(
            top1=res['top1'],
            best_c=best_c,
            cv_top1={
                str(c): res['cv_top1'][lam]
                for c, lam in zip(c_grid, lambdas)
            },
            cv_folds=folds,
            train_samples=len(y),
            test_samples=len(yt),
            checkpoint=args.checkpoint)
        os.makedirs(osp.dirname(osp.abspath(args.out)), exist_ok=True)
        atomic_json(args.out, result)


if __name__ == '__main__':
    main()
