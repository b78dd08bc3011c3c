"""Training-step speed of SiameseIM next to mmpretrain's MAE, same backbone,
against the machine's GEMM peak measured in the same run.

    python projects/speed/tools/pretrain.py [--arch b] [--batch 8]
        [--img-size 224]
        [--steps 5] [--warmup 2] [--precision fp32[,bf16[,fp16]]]
        [--device cpu] [--models siameseim,siameseim-lowres,mae,official]
        [--compile] [--adamw fused|foreach] [--gemm-size 4096]
        [--target-size 112] [--official-repo PATH] [--max-workers N]
        [--json] [--results-dir projects/speed/results]

Every (model, precision) pair, and a ``gemm`` row per precision (one
``--gemm-size``-cubed matrix product in fp32, or in the autocast dtype: the
machine's peak), gets its own worker process of
:mod:`projects.speed`; the workers take their timed steps in turns
(all see the same machine noise), as many at once as the memory holds.

A step is forward + backward + AdamW step (+ the momentum update for
SiameseIM) on synthetic inputs; fp32 runs without autocast, bf16 under
autocast, fp16 with AMP (CUDA). AdamW is fused, as in the pretraining
configs (``--adamw foreach``: torch's default, which the authors' code
always gets). The models are the config files' (the
SiameseIM ViT-B config, mmpretrain's MAE ViT-B config) at ``--arch``, a
name of mmpretrain's ``VisionTransformer.arch_zoo``. ``--compile`` compiles
our models' steps with ``torch.compile`` as mmengine's ``compile`` option
does (the first warm-up step, printed, is the compile); the authors' code
stays eager. Prints step time, images/s, GFLOP per step (forward +
backward), GFLOP/s and its fraction of the GEMM peak at that precision,
and the peak memory (CPU: the worker's peak resident set; CUDA:
``max_memory_allocated``), then the ratios: over MAE, over fp32, the
low-resolution target (``siameseim-lowres``: view b at ``--target-size``)
over the default, and ours over the authors' (``official``: a clone of
OpenGVLab/Siamese-Image-Modeling at ``--official-repo``, see
``projects/common/authors/code.py``).
"""
import argparse
import json
import sys

from mmsiameseim.precision import precision_from_flag
from projects.common.results import write_results
from projects.speed import (GEMM, arch_settings, format_table, ratios, run,
                            synthetic_geometry)
from projects.speed.options import check_patch_grid, positive_int

MODELS = ('siameseim', 'siameseim-lowres', 'mae', 'official')
PATCH_SIZE = 16  # of the ViT-B/16 configs the models are built from


def build_official(args):
    """The authors' model and inputs (a worker runs this)."""
    from projects.common import authors as authors_siameseim
    s = arch_settings(args.arch)
    model = authors_siameseim.build(args.official_repo, s['embed_dims'],
                                    s['num_layers'], s['num_heads'],
                                    args.img_size)
    geo = synthetic_geometry(args.batch, args.img_size // 16)
    data = authors_siameseim.batch(geo['boxes'], geo['flips'], geo['masks'],
                                   geo['widths'], args.img_size, args.device)
    return model, data


def pairs(args):
    """(precision, model) of every worker, the GEMM first.

    The authors' code has autocast only through ``torch.cuda.amp`` (fp16 on
    CUDA), so it gets no bf16 worker.
    """
    out = []
    for precision in args.precision.split(','):
        out.append((precision, GEMM))
        out += [(precision, name) for name in args.models.split(',')
                if not (name == 'official' and precision == 'bf16')]
    return out


def parse_args(argv=None):
    from mmpretrain.models import VisionTransformer
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--arch',
        default='b',
        choices=sorted(VisionTransformer.arch_zoo),
        help='mmpretrain ViT arch (deit-t: 192 wide)')
    parser.add_argument('--batch', type=positive_int, default=8)
    parser.add_argument('--img-size', type=positive_int, default=224)
    parser.add_argument('--steps', type=positive_int, default=5)
    parser.add_argument('--warmup', type=positive_int, default=2)
    parser.add_argument(
        '--precision',
        default='fp32',
        help='comma-separated: fp32 (no autocast), bf16 '
        '(autocast), fp16 (AMP, CUDA only)')
    parser.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    parser.add_argument(
        '--models',
        default='siameseim,mae',
        help='comma-separated: ' + ', '.join(MODELS))
    parser.add_argument(
        '--compile',
        action='store_true',
        help='torch.compile our models\' steps')
    parser.add_argument(
        '--adamw',
        default='fused',
        choices=['fused', 'foreach'],
        help='AdamW of our models and MAE (fused: the '
        'pretraining configs\' setting); the authors\' '
        'code gets torch\'s default (foreach)')
    parser.add_argument(
        '--gemm-size',
        type=positive_int,
        default=4096,
        help='n of the n^3 GEMM that measures the peak')
    parser.add_argument(
        '--official-repo',
        default=None,
        help='root of a clone of OpenGVLab/Siamese-Image-'
        'Modeling, for --models official')
    parser.add_argument(
        '--target-size',
        type=positive_int,
        default=None,
        help='view b size for siameseim-lowres (default '
        'half of --img-size)')
    parser.add_argument(
        '--max-workers',
        type=int,
        default=None,
        help='most worker processes alive at once (default: '
        'as many as the free memory holds; 1 runs them in '
        'sequence)')
    parser.add_argument(
        '--json',
        action='store_true',
        help='print one JSON object instead of a table')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='write the results file benchmark_pretrain.json '
        'there (projects/speed/results for the published figures)')
    args = parser.parse_args(argv)
    check_patch_grid(parser, args.img_size, PATCH_SIZE)
    for precision in args.precision.split(','):
        try:
            precision_from_flag(precision)
        except ValueError as e:
            parser.error(f'--precision: {e}')
        if precision == 'fp16' and args.device != 'cuda':
            parser.error('fp16 AMP needs --device cuda (use bf16 on CPUs)')
    for name in args.models.split(','):
        if name not in MODELS:
            parser.error(f'--models: unknown {name!r} ({", ".join(MODELS)})')
    if args.max_workers is None:
        args.max_workers = len(pairs(args))
    elif args.max_workers < 1:
        parser.error('--max-workers: at least 1')
    if 'official' in args.models.split(','):
        from projects.common.authors import checkout_problem
        problem = checkout_problem(args.official_repo)
        if problem:
            parser.error(f'--models official needs --official-repo: {problem}')
        if 'bf16' in args.precision.split(','):
            print(
                'note: no bf16 row for official (its autocast is '
                'torch.cuda.amp: fp32, or fp16 on CUDA)',
                file=sys.stderr)
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = run(args, pairs(args), builders=dict(official=build_official))
    summary = ratios(rows)
    if args.results_dir:
        path = write_results(
            'benchmark_pretrain',
            dict(rows=rows, **summary),
            results_dir=args.results_dir)
        print(f'results file: {path}', file=sys.stderr)
    if args.json:
        print(json.dumps(dict(rows=rows, **summary)))
    else:
        print(format_table(rows, summary))


if __name__ == '__main__':
    main()
