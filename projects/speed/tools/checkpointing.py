"""Activation checkpointing's memory saving and time cost at ViT-B and
ViT-L, and the preflight's memory model against a measured step.

    python projects/speed/tools/checkpointing.py [--archs b,l] [--batch 8,4]
        [--steps 5] [--results-dir projects/speed/results]

Each (arch, checkpointing off / on) runs in a fresh process, one at a time
(run it alone on the machine): the first training step's growth of the
resident set (fp32, AdamW), the median of ``--steps`` more steps, and the
memory model fitted from the saved-tensor bytes at batches 1 and 2
(``projects/speed/checkpointing.py``). Prints a table and writes
the results file ``benchmark_checkpointing``.
"""
import argparse
import json

from projects.common.results import write_results
from projects.speed.checkpointing import run, savings, table


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--archs', default='b,l', help='ViT archs (b,l)')
    parser.add_argument(
        '--batch', default='8,4', help='batch of each arch (8,4)')
    parser.add_argument(
        '--steps', type=int, default=5, help='timed steps after the first')
    parser.add_argument('--results-dir', default=None)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    archs = args.archs.split(',')
    batches = [int(b) for b in args.batch.split(',')]
    if len(batches) != len(archs):
        raise SystemExit(f'--batch gives {len(batches)} sizes for '
                         f'{len(archs)} archs')
    cases = [(arch, batch, cp, args.steps)
             for arch, batch in zip(archs, batches) for cp in (False, True)]
    rows = run(cases)
    print(table(rows))
    ratios = savings(rows)
    print(json.dumps(ratios))
    path = write_results(
        'benchmark_checkpointing',
        dict(rows=rows, savings=ratios),
        results_dir=args.results_dir)
    print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
