"""How far exact (``micro_batches``) and plain (``accumulative_counts``)
gradient accumulation are from the gradient of one whole batch.

    python projects/accumulation/tools/accumulation.py [--results-dir DIR]

On the demo's model (``projects/accumulation/gradients.py``), with
the recipe's token BatchNorm and with LayerNorm in the neck; prints a table
and writes the results file ``accumulation``.
"""
import argparse

from projects.accumulation.gradients import measure, table
from projects.common.results import write_results

CASES = ((16, 4), (64, 4), (256, 4), (256, 16))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--results-dir', default=None)
    args = parser.parse_args(argv)
    rows = measure(CASES)
    print(table(rows))
    print(
        'wrote',
        write_results(
            'accumulation', dict(rows=rows), results_dir=args.results_dir))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
