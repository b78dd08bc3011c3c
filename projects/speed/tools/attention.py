"""Attention kernels under CPU bf16 autocast, at SiameseIM's shapes.

    python projects/speed/tools/attention.py [--arch b] [--batch 8]
        [--img-size 224] [--patch-size 16] [--masked 118] [--repeats 5]
        [--json] [--results-dir projects/speed/results]

For every attention call of a SiameseIM step (online backbone on the visible
tokens of view a, target backbone on all tokens of view b, the projector on
each, the predictor on visible + query tokens) times forward + backward of
``scaled_dot_product_attention`` three ways, in turns in this process:
torch's fused bf16 kernel, its bf16 matmul-softmax kernel, and
``fp32_attention_under_cpu_autocast`` (the fp32 fused kernel on upcast
inputs, what SiameseIM's blocks use), all from bf16 inputs.
Prints the median per variant and which is fastest; the last row is the
step's total (each call weighted by how often a step makes it).
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from mmsiameseim.models.backbones.siameseim_vit import \
    fp32_attention_under_cpu_autocast
from projects.common.results import write_results
from projects.speed import arch_settings, decoder_heads
from projects.speed.options import check_patch_grid, positive_int
from projects.speed.report import format_attention_table as format_table

VARIANTS = ('bf16 fused', 'bf16 math', 'fp32 fused')


def step_calls(arch,
               batch,
               grid,
               masked,
               projector_depth=2,
               predictor_depth=4):
    """(name, (B, heads, tokens, head dim), calls per step) of each kind
    of attention call in a SiameseIM training step."""
    s = arch_settings(arch)
    dims, depth, heads = s['embed_dims'], s['num_layers'], s['num_heads']
    neck_heads = decoder_heads(arch)
    visible = grid * grid - masked + 1  # + cls
    full = grid * grid + 1
    query = visible + grid * grid
    return [
        ('online backbone', (batch, heads, visible, dims // heads), depth),
        ('target backbone', (batch, heads, full, dims // heads), depth),
        ('online projector', (batch, neck_heads, visible, dims // neck_heads),
         projector_depth),
        ('target projector', (batch, neck_heads, full, dims // neck_heads),
         projector_depth),
        ('predictor', (batch, neck_heads, query, dims // neck_heads),
         predictor_depth),
    ]


def _run(variant, shape, backward):
    # bf16 inputs, as the qkv projection gives them under autocast
    q, k, v = [
        torch.randn(shape, dtype=torch.bfloat16, requires_grad=backward)
        for _ in range(3)
    ]
    start = time.perf_counter()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        if variant == 'fp32 fused':
            out = fp32_attention_under_cpu_autocast(q, k, v)
        else:
            backend = (
                SDPBackend.FLASH_ATTENTION
                if variant == 'bf16 fused' else SDPBackend.MATH)
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v)
    if backward:
        out.float().sum().backward()
    return time.perf_counter() - start


def time_call(shape, backward, repeats):
    for variant in VARIANTS:  # warm-up
        _run(variant, shape, backward)
    times = {variant: [] for variant in VARIANTS}
    for _ in range(repeats):
        for variant in VARIANTS:
            times[variant].append(_run(variant, shape, backward))
    return {
        variant: statistics.median(t) * 1e3
        for variant, t in times.items()
    }


def measure(arch='b',
            batch=8,
            img_size=224,
            patch_size=16,
            masked=118,
            repeats=5):
    grid = img_size // patch_size
    rows = []
    total = dict.fromkeys(VARIANTS, 0.)
    for name, shape, calls in step_calls(arch, batch, grid, masked):
        backward = not name.startswith('target')  # the target has no grad
        ms = time_call(shape, backward, repeats)
        for variant in VARIANTS:
            total[variant] += calls * ms[variant]
        rows.append(
            dict(
                call=name,
                shape=list(shape),
                calls=calls,
                backward=backward,
                ms=ms,
                fastest=min(ms, key=ms.get)))
    rows.append(
        dict(
            call='step total',
            shape=None,
            calls=None,
            backward=None,
            ms=total,
            fastest=min(total, key=total.get)))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    from mmpretrain.models import VisionTransformer
    parser.add_argument(
        '--arch', default='b', choices=sorted(VisionTransformer.arch_zoo))
    parser.add_argument('--batch', type=positive_int, default=8)
    parser.add_argument('--img-size', type=positive_int, default=224)
    parser.add_argument('--patch-size', type=positive_int, default=16)
    parser.add_argument(
        '--masked', type=int, default=118, help='masked patches of view a')
    parser.add_argument('--repeats', type=positive_int, default=5)
    parser.add_argument('--json', action='store_true')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='write the results file benchmark_attention.json '
        'there (projects/speed/results for the published figures)')
    args = parser.parse_args(argv)
    check_patch_grid(parser, args.img_size, args.patch_size)
    grid = args.img_size // args.patch_size
    if not 0 <= args.masked < grid * grid:
        parser.error(f'--masked must be in [0, {grid * grid}) for a '
                     f'{grid}x{grid} grid, got {args.masked}')
    rows = measure(args.arch, args.batch, args.img_size, args.patch_size,
                   args.masked, args.repeats)
    if args.results_dir:
        settings = dict(
            arch=args.arch,
            batch=args.batch,
            img_size=args.img_size,
            patch_size=args.patch_size,
            masked=args.masked,
            repeats=args.repeats)
        path = write_results(
            'benchmark_attention',
            dict(rows=rows, settings=settings),
            results_dir=args.results_dir)
        print(f'results file: {path}', file=sys.stderr)
    print(json.dumps(dict(rows=rows)) if args.json else format_table(rows))


if __name__ == '__main__':
    main()
