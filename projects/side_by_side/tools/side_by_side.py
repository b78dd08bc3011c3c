"""Train the authors' SiameseIM and ours side by side on Fashion-MNIST.

    python projects/side_by_side/tools/side_by_side.py --official-repo PATH
    [--seeds 0,1,2]
        [--train-images 12800] [--epochs 1] [--knn-train 10000]
        [--probe-train 10000] [--probe-epochs 3] [--fewshot-fraction 0.01]
        [--test-images 10000] [--work-dir work_dirs/side_by_side] [--fp32]
        [--results-dir DIR]

For each seed, both implementations pretrain on the same training images
(``--train-images`` drawn once, seed 0, from the 60k) with the settings of
configs/pretrain/siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py,
then both are evaluated by the demo's protocol
(``projects.common.evaluation.FrozenBackboneProtocol`` with the evaluation of
configs/demo/fashionmnist_demo.py and the subset sizes above; a fixed
subset of ``--test-images`` when fewer than 10k).

* Ours: that config through mmengine's Runner (``pretrain_once``).
* The authors': their code from a clone at ``--official-repo`` (nothing of
  it is shipped), in a child process
  (projects/side_by_side/tools/side_by_side_authors.py
  says what of theirs runs and which settings are shared); their weights are
  converted with ``mmsiameseim.apis.build_from_official``.

images/s: batch / median iteration time (data and step), as mmengine logs
it. Writes ``WORK_DIR/side_by_side.md`` (the table) and
``side_by_side.json`` (every run), updated after each run; finished runs
are reused by a rerun. When every run finished, the results file
``side_by_side.json`` goes to ``--results-dir`` (default
projects/side_by_side/results: the published table is rendered from it).
"""
import argparse
import json
import os
import os.path as osp
import subprocess
import sys

from mmengine.config import Config

from projects.common.authors import checkout_problem
from projects.demo.cli import CONFIG, ROOT, build_protocol, check_dataset, say
from projects.side_by_side import (demo_overrides, format_table, ours_cfg,
                                   settings, train_indices)

IMPLS = ('ours', 'authors')


def run_authors(args, seed, run_dir, settings_, indices):
    """Their pretraining in a child process; returns what ``pretrain_once``
    returns (checkpoint in our format)."""
    from mmsiameseim.atomic_io import atomic_json, load_json
    from mmsiameseim.evaluation import native_bf16
    out_dir = osp.join(run_dir, 'authors')
    done = load_json(osp.join(out_dir, 'pretrain_done.json'))
    if done:
        return done
    os.makedirs(out_dir, exist_ok=True)
    opts = dict(
        repo=osp.abspath(args.official_repo),
        seed=seed,
        settings=settings_,
        indices=indices,
        epochs=args.epochs,
        fp32=args.fp32 or not native_bf16(),
        data_root=osp.abspath(args.data_root),
        checkpoint=osp.join(out_dir, 'official.pth'))
    opts_path = osp.join(out_dir, 'opts.json')
    if osp.exists(osp.join(out_dir, 'child.json')):  # trained, not converted
        if load_json(opts_path) != opts:
            sys.exit(f'{out_dir} holds a run with other settings: '
                     'delete it or use another --work-dir')
    else:
        atomic_json(opts_path, opts)
        say(f'seed {seed}: the authors\' code pretraining ({len(indices)} '
            f'images x {args.epochs} epoch(s)), log {out_dir}/train.log')
        with open(osp.join(out_dir, 'train.log'), 'w') as log:
            proc = subprocess.run([
                sys.executable,
                osp.join(ROOT, 'projects', 'side_by_side', 'tools',
                         'side_by_side_authors.py'), opts_path
            ],
                                  stdout=log,
                                  stderr=subprocess.STDOUT,
                                  cwd=ROOT)
        if proc.returncode:
            sys.exit(f'the authors\' training failed (exit '
                     f'{proc.returncode}): see {out_dir}/train.log')
    done = load_json(osp.join(out_dir, 'child.json'))
    # their weights in our format, for the demo's evaluation
    import torch

    from mmsiameseim.apis import build_from_official
    model = build_from_official(
        opts['checkpoint'],
        num_heads=settings_['heads'],
        decoder_num_heads=settings_['decoder_heads'])
    done['checkpoint'] = osp.join(out_dir, f'epoch_{args.epochs}.pth')
    torch.save({'state_dict': model.state_dict()}, done['checkpoint'])
    atomic_json(osp.join(out_dir, 'pretrain_done.json'), done)
    return done


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--official-repo',
        help='root of a clone of '
        'OpenGVLab/Siamese-Image-Modeling')
    parser.add_argument(
        '--seeds',
        default='0,1,2',
        type=lambda s: [int(x) for x in s.split(',')])
    parser.add_argument(
        '--impls', default=','.join(IMPLS), type=lambda s: s.split(','))
    parser.add_argument('--train-images', type=int, default=12800)
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--knn-train', type=int, default=10000)
    parser.add_argument('--probe-train', type=int, default=10000)
    parser.add_argument('--probe-epochs', type=int, default=3)
    parser.add_argument('--fewshot-fraction', type=float, default=0.01)
    parser.add_argument(
        '--test-images',
        type=int,
        default=10000,
        help='score on this many of the 10k test images '
        '(a fixed random subset when fewer)')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument('--work-dir', default='work_dirs/side_by_side')
    parser.add_argument(
        '--fp32',
        action='store_true',
        help='both sides in '
        'fp32 (default: bf16 autocast on CPUs with native '
        'bf16)')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='folder of the results file side_by_side.json, '
        'written when every run finished (default: '
        'projects/side_by_side/results, the published figures)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    bad = [i for i in args.impls if i not in IMPLS]
    if bad:
        sys.exit(f'--impls: unknown {bad}; choose from {IMPLS}')
    if 'authors' in args.impls and checkout_problem(args.official_repo):
        sys.exit(f'--official-repo: {checkout_problem(args.official_repo)}')
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    from projects.common.results import write_results
    from projects.demo import pretrain_once
    check_dataset(osp.abspath(args.data_root))
    demo_cfg = Config.fromfile(osp.join(ROOT, CONFIG))
    demo_cfg.merge_from_dict(demo_overrides(args))
    settings_ = settings(
        Config.fromfile(osp.join(ROOT, demo_cfg.pretrain_configs.siameseim)))
    indices = train_indices(args.train_images)
    wd = osp.abspath(args.work_dir)
    os.makedirs(wd, exist_ok=True)
    runs = []
    for seed in args.seeds:
        run_dir = osp.join(wd, f'seed{seed}')
        protocol = build_protocol(demo_cfg, run_dir, args.data_root)
        for impl in args.impls:
            cfg = ours_cfg(args, demo_cfg, seed, run_dir, indices)
            pre = pretrain_once(cfg) if impl == 'ours' else run_authors(
                args, seed, run_dir, settings_, indices)
            res = protocol.evaluate(impl, pre['checkpoint'], cfg.model)
            scores = {k: res[k] for k in ('knn', 'linear', 'fewshot')}
            runs.append(
                dict(
                    impl=impl,
                    seed=seed,
                    **scores,
                    **{k: pre[k]
                       for k in ('images_per_s', 'wall_s')}))
            say(f'seed {seed} {impl}: kNN {res["knn"]:.2f}, linear '
                f'{res["linear"]:.2f}, few-shot {res["fewshot"]:.2f}, '
                f'{pre["images_per_s"]:.0f} images/s')
            table = format_table(runs, args, settings_['batch'],
                                 protocol.describe())
            with open(osp.join(wd, 'side_by_side.md'), 'w') as f:
                f.write(table)
            record = dict(runs=runs, settings=settings_, args=vars(args))
            with open(osp.join(wd, 'side_by_side.json'), 'w') as f:
                json.dump(record, f, indent=2)
    path = write_results(
        'side_by_side',
        dict(record, protocol=protocol.describe()),
        results_dir=args.results_dir)
    print(table)
    say(f'results file: {path}')


if __name__ == '__main__':
    main()
