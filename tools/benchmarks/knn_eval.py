"""Weighted k-NN (k=20, T=0.07, as in DINO) on frozen backbone features.

    python tools/benchmarks/knn_eval.py CONFIG [--checkpoint CKPT]
        [--train-samples N] [--k 20] [--temperature 0.07]
        [--precision fp32|bf16|fp16] [--out result.json]

CONFIG is an mmpretrain classification config describing the backbone and
the train/test datasets (e.g. the linear-probe configs in
configs/benchmarks/mmpretrain/); its test pipeline is used for both splits.
CKPT is any checkpoint whose backbone weights sit under ``backbone.`` (ours,
or any mmpretrain model). Without it the backbone is randomly initialised.
"""
import argparse
import json

import numpy as np
from mmengine.config import Config


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument('--checkpoint', default=None)
    parser.add_argument('--train-samples', type=int, default=None,
                        help='random subset of the training set')
    parser.add_argument('--k', type=int, default=20)
    parser.add_argument('--temperature', type=float, default=0.07)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--precision', default='fp32',
                        choices=['fp32', 'bf16', 'fp16'],
                        help='feature extraction: fp32 (no autocast) or '
                        'bf16 / fp16 autocast')
    parser.add_argument('--out', default=None, help='write results as JSON')
    args = parser.parse_args(argv)

    import mmsiameseim  # noqa: F401
    from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                        extract_features,
                                        weighted_knn_accuracy)
    cfg = Config.fromfile(args.config)
    model = build_frozen_backbone_model(cfg, args.checkpoint)
    pipeline = cfg.test_dataloader.dataset.pipeline
    train_cfg = cfg.train_dataloader.dataset
    indices = None
    if args.train_samples:
        from mmpretrain.registry import DATASETS
        n = len(DATASETS.build(dict(train_cfg, pipeline=[], lazy_init=False)))
        rng = np.random.default_rng(args.seed)
        indices = np.sort(rng.choice(n, min(n, args.train_samples), False))
    tr_x, tr_y = extract_features(model, train_cfg, pipeline, indices,
                                  desc='train features',
                                  precision=args.precision)
    te_x, te_y = extract_features(model, cfg.test_dataloader.dataset,
                                  pipeline, desc='test features',
                                  precision=args.precision)
    result = weighted_knn_accuracy(tr_x, tr_y, te_x, te_y, args.k,
                                   args.temperature)
    result.update(k=args.k, temperature=args.temperature,
                  train_samples=len(tr_y), test_samples=len(te_y),
                  precision=args.precision,
                  checkpoint=args.checkpoint)
    print(f"kNN top-1 {result['top1']:.2f} %  top-5 {result['top5']:.2f} % "
          f"({len(tr_y)} train / {len(te_y)} test images)")
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(result, f, indent=2)


if __name__ == '__main__':
    main()
