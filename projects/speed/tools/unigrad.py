"""Time and memory of the UniGrad loss, chunked path vs plain autograd.

    python projects/speed/tools/unigrad.py [--batch 32] [--tokens 196]
        [--channels 768] [--repeats 7] [--dtype fp32|bf16] [--device cpu]
        [--step-seconds S | --measure-step] [--json]
        [--results-dir projects/speed/results]

Variants: 'chunked' (``UniGradLoss()``, the default analytic-gradient path)
and 'autograd' (``UniGradLoss(memory_efficient=False)``, the formula through
autograd). Time: median (and min-max) of forward + backward over
``--repeats`` runs after one warm-up, both variants in this process, taken
in turns. Extra memory: what forward + backward needs beyond its inputs
(prediction, target) and its output (the prediction's gradient):

* CPU: each variant runs in a fresh subprocess that allocates the inputs,
  warms the kernels up on a tiny input, resets the kernel's peak resident
  set (writing 5 to /proc/self/clear_refs, Linux), runs one forward +
  backward at full size and reads the peak (VmHWM); peak minus the resident
  set before, minus the gradient's size, is the extra memory. A fresh
  process per variant keeps the other variant's freed pages out of the
  reading (torch's CPU allocator keeps no statistics, ``ru_maxrss`` cannot
  be reset and already holds the import-time peak, and ``torch.profiler``
  reports allocations per op, not a peak). The child runs with
  MALLOC_MMAP_THRESHOLD_=65536 so that glibc returns every freed block
  above 64 kB at once (its heap otherwise keeps some freed temporaries
  resident, which adds 10-30 MB of noise); RSS counts touched pages, so a
  buffer filled chunk by chunk counts as it fills.
* CUDA: ``torch.cuda.max_memory_allocated`` minus the allocation before the
  call, minus the gradient's size.

With ``--step-seconds S`` (a SiameseIM training step at the same batch, e.g.
from projects/speed/tools/pretrain.py) or ``--measure-step`` (times one ViT-B
SiameseIM step at ``--batch`` with that tool's model and batch builders)
the loss time is also given as a percentage of the step.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

from projects.common.results import write_results
from projects.speed.options import positive_int
from projects.speed.report import format_unigrad_table as format_table
from projects.speed.unigrad import (DTYPES, VARIANTS, build_loss, fwd_bwd,
                                    make_inputs, memory_child, timed_rows)


def extra_memory_mb(args, variant):
    """Memory beyond inputs and output of one forward + backward (MB)."""
    if args.device == 'cuda':
        loss = build_loss(variant)
        pred, target = make_inputs(args)
        fwd_bwd(loss, pred, target, 'cuda')
        pred.grad = None
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fwd_bwd(loss, pred, target, 'cuda')
        peak = torch.cuda.max_memory_allocated() - before
        return (peak - pred.grad.nbytes) / 2**20
    cmd = [
        sys.executable,
        os.path.abspath(__file__), '--_memory-child', variant, '--batch',
        str(args.batch), '--tokens',
        str(args.tokens), '--channels',
        str(args.channels), '--dtype', args.dtype
    ]
    # every block > 64 kB is mmapped, so freed temporaries leave the
    # resident set at once (glibc otherwise keeps some on its heap)
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_='65536')
    out = subprocess.run(
        cmd, capture_output=True, text=True, check=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--batch', type=positive_int, default=32)
    parser.add_argument('--tokens', type=positive_int, default=196)
    parser.add_argument('--channels', type=positive_int, default=768)
    parser.add_argument('--repeats', type=positive_int, default=7)
    parser.add_argument('--dtype', default='fp32', choices=sorted(DTYPES))
    parser.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    parser.add_argument(
        '--step-seconds',
        type=float,
        help='one SiameseIM training step at this batch (s)')
    parser.add_argument(
        '--measure-step',
        action='store_true',
        help='time a ViT-B SiameseIM step at --batch here')
    parser.add_argument(
        '--json',
        action='store_true',
        help='print one JSON object instead of a table')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='write the results file benchmark_unigrad.json '
        'there (projects/speed/results for the published figures)')
    parser.add_argument(
        '--_memory-child',
        dest='memory_child',
        choices=sorted(VARIANTS),
        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.step_seconds is not None and args.measure_step:
        parser.error('give --step-seconds or --measure-step, not both')
    if args.memory_child:
        return memory_child(args, args.memory_child)

    rows, step = timed_rows(args, extra_memory_mb)
    data = dict(rows=rows, step_seconds=step, batch=args.batch)
    if args.results_dir:
        path = write_results(
            'benchmark_unigrad', data, results_dir=args.results_dir)
        print(f'results file: {path}', file=sys.stderr)
    if args.json:
        print(json.dumps(dict(rows=rows, step_seconds=step)))
        return
    print(format_table(rows, step, args.batch))


if __name__ == '__main__':
    main()
