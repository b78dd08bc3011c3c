"""Weighted k-NN (k=20, T=0.07, as in DINO) on frozen backbone features.

    python tools/evaluation/knn_eval.py CONFIG [--checkpoint CKPT]
        [--train-samples N] [--k 20] [--temperature 0.07]
        [--precision fp32|bf16|fp16] [--out result.json]

CONFIG is an mmpretrain classification config describing the backbone and
the train/test datasets (e.g. the linear-probe configs in
configs/benchmarks/mmpretrain/); its test pipeline is used for both splits.
CKPT is any checkpoint whose backbone weights sit under ``backbone.`` (ours,
or any mmpretrain model). Without it the backbone is randomly initialised.
A missing, unreadable, wrong or non-finite checkpoint, and counts the data
cannot give, are refused (exit status 1) with a message naming them; the
datasets never download. With fewer training images than k, all of them
vote and the result says so (``k`` is the number used). ``--out`` is
written atomically.
"""
import argparse
import sys

import numpy as np
from mmengine.config import Config


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument('--checkpoint', default=None)
    parser.add_argument(
        '--train-samples',
        type=int,
        default=None,
        help='random subset of the training set')
    parser.add_argument('--k', type=int, default=20)
    parser.add_argument('--temperature', type=float, default=0.07)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument(
        '--precision',
        default='fp32',
        choices=['fp32', 'bf16', 'fp16'],
        help='feature extraction: fp32 (no autocast) or '
        'bf16 / fp16 autocast')
    parser.add_argument('--out', default=None, help='write results as JSON')
    args = parser.parse_args(argv)
    if args.k < 1:
        parser.error(f'--k {args.k}: at least 1')
    if args.train_samples is not None and args.train_samples < 1:
        parser.error(f'--train-samples {args.train_samples}: at least 1 '
                     '(leave it out for the whole training set)')
    try:
        run(args)
    except (FileNotFoundError, ValueError) as e:  # they name the file
        sys.exit(f'error: {e}')


def run(args):
    import mmsiameseim  # noqa: F401
    from mmsiameseim.atomic_io import atomic_json
    from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                        extract_features,
                                        weighted_knn_accuracy)
    from mmsiameseim.evaluation.linear_probe import never_download
    from mmsiameseim.precision import precision_from_flag
    precision = precision_from_flag(args.precision)
    cfg = Config.fromfile(args.config)
    never_download(cfg)
    model = build_frozen_backbone_model(cfg, args.checkpoint)
    pipeline = cfg.test_dataloader.dataset.pipeline
    train_cfg = cfg.train_dataloader.dataset
    indices = None
    if args.train_samples:
        from mmpretrain.registry import DATASETS
        n = len(DATASETS.build(dict(train_cfg, pipeline=[], lazy_init=False)))
        rng = np.random.default_rng(args.seed)
        indices = np.sort(rng.choice(n, min(n, args.train_samples), False))
    tr_x, tr_y = extract_features(
        model,
        train_cfg,
        pipeline,
        indices,
        desc='train features',
        precision=precision)
    te_x, te_y = extract_features(
        model,
        cfg.test_dataloader.dataset,
        pipeline,
        desc='test features',
        precision=precision)
    result = weighted_knn_accuracy(tr_x, tr_y, te_x, te_y, args.k,
                                   args.temperature)
    if result['k'] < args.k:
        print(f'k={args.k} asked, {result["k"]} used: the training set has '
              f'{len(tr_y)} images')
    result.update(
        k_asked=args.k,
        temperature=args.temperature,
        train_samples=len(tr_y),
        test_samples=len(te_y),
        precision=precision,
        checkpoint=args.checkpoint)
    print(f"kNN top-1 {result['top1']:.2f} %  top-5 {result['top5']:.2f} % "
          f'({len(tr_y)} train / {len(te_y)} test images)')
    if args.out:
        atomic_json(args.out, result)


if __name__ == '__main__':
    main()
