"""kNN and few-shot accuracy of a pretrained backbone on your own labelled
images.

    python tools/evaluation/evaluate_folder.py CHECKPOINT --data-root DIR
        [--work-dir DIR] [--config PRETRAIN_CONFIG] [--train-split train]
        [--val-split val] [--feature cls_token|avg_featmap] [--final-norm]
        [--size N] [--k 20] [--temperature 0.07]
        [--fraction 0.01 | --no-fewshot] [--folds 3] [--seed 0]
        [--batch-size 64] [--out FILE.json]

DIR holds one folder per split, each with one sub-folder per class (the classes
of the training split number both: ``LabelledImageFolder``). Both splits are
embedded (frozen backbone, centre crop, as
``tools/evaluation/extract_features.py``; resumable, written to the work dir),
then the validation split is scored by weighted kNN over the training split
(k=20, T=0.07) and by an L2-regularised logistic regression fitted on a
class-balanced ``--fraction`` of the training split (1 %, at least 2 images per
class; strength by cross-validation on those images only; skipped, with a note,
when a class has a single training image). CHECKPOINT is a SiameseIM or
mmpretrain ViT checkpoint (its pretraining config is read from it unless
``--config`` gives it); a config file (``.py``) instead scores the random
initial weights (a floor). Prints a table; writes the numbers as JSON (default:
WORK_DIR/results.json), the kNN score as soon as it is known (kept if few-shot
then fails).
"""
import argparse
import json
import os
import os.path as osp
import sys


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        'checkpoint',
        help='checkpoint, or a config (.py) for the random initial weights')
    p.add_argument('--data-root', required=True, help='labelled folder')
    p.add_argument(
        '--work-dir',
        default=None,
        help='embeddings and results (default: work_dirs/evaluate_folder/'
        '<folder name>)')
    p.add_argument('--config', default=None, help='pretraining config')
    p.add_argument('--train-split', default='train')
    p.add_argument('--val-split', default='val')
    p.add_argument(
        '--feature',
        default='cls_token',
        choices=('cls_token', 'avg_featmap'),
        help='cls token, or layer-normalised mean of the patch tokens')
    p.add_argument('--final-norm', action='store_true')
    p.add_argument('--size', type=int, default=None)
    p.add_argument('--k', type=int, default=20)
    p.add_argument('--temperature', type=float, default=0.07)
    p.add_argument('--fraction', type=float, default=0.01)
    p.add_argument('--no-fewshot', action='store_true')
    p.add_argument('--folds', type=int, default=3)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--out', default=None, help='results JSON')
    args = p.parse_args(argv)
    if not 0 < args.fraction <= 1:
        p.error(f'--fraction {args.fraction}: give a share in (0, 1]')
    if args.k < 1 or args.folds < 2:
        p.error('--k must be >= 1 and --folds >= 2')
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    import mmsiameseim  # noqa: F401
    from mmsiameseim.evaluation import (checkpoint_or_config,
                                        evaluate_labelled_folder, frozen_vit)
    try:
        checkpoint, cfg = checkpoint_or_config(args.checkpoint, args.config)
    except FileNotFoundError as e:
        sys.exit(str(e))
    model_cfg = cfg.model
    work_dir = args.work_dir or osp.join(
        'work_dirs', 'evaluate_folder',
        osp.basename(osp.abspath(args.data_root)))
    os.makedirs(work_dir, exist_ok=True)
    backbone, mean, std = frozen_vit(checkpoint, model_cfg, args.final_norm)
    out = args.out or osp.join(work_dir, 'results.json')
    settings = dict(
        vars(args),
        checkpoint=checkpoint or f'{args.checkpoint} (random '
        'initial weights)')

    saved = []

    def save(results):  # kNN first: a later failure keeps it
        with open(out, 'w') as f:
            json.dump(dict(results, settings=settings), f, indent=2)
        saved.append(out)

    try:
        results = evaluate_labelled_folder(
            backbone,
            mean,
            std,
            args.data_root,
            work_dir,
            train_split=args.train_split,
            val_split=args.val_split,
            k=args.k,
            temperature=args.temperature,
            fraction=None if args.no_fewshot else args.fraction,
            folds=args.folds,
            seed=args.seed,
            save=save,
            size=args.size or model_cfg.backbone.get('img_size', 224),
            feature=args.feature,
            batch_size=args.batch_size,
            checkpoint=checkpoint)
    except ValueError as e:
        if not saved:
            sys.exit(str(e))
        sys.exit(f'few-shot failed: {e}. The kNN score is kept in {out}; '
                 'change --fraction, or leave few-shot out with '
                 '--no-fewshot')
    save(results)
    report(results, args.temperature)
    print(f'wrote {out}')
    return dict(results, settings=settings)


def report(results: dict, temperature: float) -> None:
    data = results['data']
    print(f'{len(data["classes"])} classes; images: ' +
          ', '.join(f'{s} {n}' for s, n in data['images'].items()))
    for split, files in data['skipped'].items():
        if files:
            print(f'skipped in {split} (not readable images): ' +
                  ', '.join(files[:5]))
    print('| protocol | top-1 | |\n|---|---|---|')
    knn = results['knn']
    print(f'| kNN (k={knn["k"]}, T={temperature}) | '
          f'{knn["top1"]:.2f} | top-5 {knn["top5"]:.2f} |')
    few = results.get('fewshot', {})
    if 'top1' in few:
        print(f'| few-shot ({few["labelled"]} labelled images) | '
              f'{few["top1"]:.2f} | l2 {few["l2"]:g} |')
    if 'note' in few:
        print(few['note'])


if __name__ == '__main__':
    main()
