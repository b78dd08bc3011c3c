"""Wall time and accuracy of the linear probe trained through mmengine's
Runner against the probe trained on cached frozen features.

    python projects/speed/tools/linear_probe.py [--checkpoint PATH]
        [--train 2000] [--test 1000] [--epochs 3] [--seeds 1]
        [--precision bfloat16] [--row]

Both engines train the probe config's classifier
(configs/benchmarks/mmpretrain/vit-tiny-p4_linear-probe-10e_fashionmnist.py)
on the same ``--train`` random training images (seed 0) and score the
first ``--test`` test images, in turns (every engine sees the same machine
load). The cached time includes extracting both flips of the training
images and the test features. ``--row`` times instead one row of the demo's
evaluation (``FrozenBackboneProtocol.evaluate``: kNN, few-shot and the
probe, at configs/demo/fashionmnist_demo.py's settings with ``--train`` as
the kNN bank and probe sizes) under each engine. Without ``--checkpoint``
the backbone is a fixed random one (seed 123), saved to a temporary file.
Prints a table and the load average; writes no results file.
"""
import argparse
import os
import os.path as osp
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = osp.dirname(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))
sys.path.insert(0, ROOT)
PROBE = osp.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                 'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
DEMO = osp.join(ROOT, 'configs', 'demo', 'fashionmnist_demo.py')
ENGINES = ('runner', 'cached')


def parse_args(argv=None):
    from mmsiameseim.evaluation import native_bf16
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--checkpoint', help='backbone weights (backbone.*)')
    p.add_argument('--train', type=int, default=2000)
    p.add_argument('--test', type=int, default=1000)
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--seeds', type=int, default=1)
    p.add_argument(
        '--precision',
        default='bfloat16' if native_bf16() else 'float32',
        choices=('float32', 'bfloat16', 'float16'))
    p.add_argument(
        '--row',
        action='store_true',
        help="time one row of the demo's evaluation")
    return p.parse_args(argv)


def random_checkpoint(cfg, path):
    from mmsiameseim.evaluation import build_frozen_backbone_model
    torch.manual_seed(123)
    model = build_frozen_backbone_model(cfg, None)
    torch.save({'state_dict': model.state_dict()}, path)
    return path


def time_probe(engine, cfg, checkpoint, args, seed, tmp):
    from mmsiameseim.evaluation import linear_probe_accuracy
    from mmsiameseim.evaluation.cached_linear_probe import \
        cached_linear_probe_accuracy
    train = np.sort(
        np.random.default_rng(0).choice(60000, args.train, replace=False))
    test = np.arange(args.test)
    start = time.perf_counter()
    if engine == 'runner':
        top1 = linear_probe_accuracy(
            cfg,
            checkpoint,
            osp.join(tmp, f'runner_{seed}'),
            train,
            test,
            args.epochs,
            seed=seed,
            precision=args.precision)
    else:
        top1 = cached_linear_probe_accuracy(
            cfg,
            checkpoint,
            train,
            test,
            args.epochs,
            seed=seed,
            precision=args.precision)
    return time.perf_counter() - start, dict(linear=top1)


def time_row(engine, checkpoint, args, seed, tmp):
    from mmengine.config import Config

    from projects.common.evaluation import FrozenBackboneProtocol
    demo = Config.fromfile(DEMO).evaluation
    protocol = FrozenBackboneProtocol.from_cfg(
        demo,
        work_dir=osp.join(tmp, f'row_{engine}_{seed}'),
        knn=dict(demo.knn, train_samples=args.train),
        linear=dict(
            demo.linear,
            train_samples=args.train,
            epochs=args.epochs,
            engine=engine),
        test_samples=args.test,
        precision=args.precision)
    start = time.perf_counter()
    scores = protocol.evaluate('row', checkpoint)
    return time.perf_counter() - start, scores


def main(argv=None):
    args = parse_args(argv)
    from mmsiameseim.evaluation import probe_config
    cfg = probe_config(PROBE)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = args.checkpoint or random_checkpoint(
            cfg, osp.join(tmp, 'random_backbone.pth'))
        load = os.getloadavg()[0]
        for seed in range(args.seeds):
            for engine in ENGINES:
                if args.row:
                    wall, scores = time_row(engine, checkpoint, args, seed,
                                            tmp)
                else:
                    wall, scores = time_probe(engine, cfg, checkpoint, args,
                                              seed, tmp)
                rows.append((engine, seed, wall, scores))
                print(
                    f'{engine} seed {seed}: {wall:.1f} s, {scores}',
                    flush=True)
        load = (load + os.getloadavg()[0]) / 2
    what = "one row of the demo's evaluation" if args.row else 'linear probe'
    print(f'\n{what}: {args.train} training images, {args.test} test '
          f'images, {args.epochs} epoch(s), {args.precision}, '
          f'{os.cpu_count()} CPUs, load average {load:.1f}\n')
    keys = sorted({k for *_, s in rows for k in s if k != 'fewshot_l2'})
    print('| engine | seed | wall s | ' + ' | '.join(keys) + ' |')
    print('|---' * (3 + len(keys)) + '|')
    for engine, seed, wall, scores in rows:
        print(f'| {engine} | {seed} | {wall:.1f} | ' +
              ' | '.join(f'{scores[k]:.2f}' for k in keys) + ' |')
    mean = {
        e: np.mean([w for en, _, w, _ in rows if en == e])
        for e in ENGINES
    }
    print(f'\nrunner / cached wall time: '
          f'{mean["runner"] / mean["cached"]:.2f}x')


if __name__ == '__main__':
    main()
