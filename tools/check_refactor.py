"""Whether a reorganisation changed any number: the smoke demo's scores and
losses and the parity fixture's numbers at two commits, side by side.

    python tools/check_refactor.py --before REV [--after HEAD]
        [--work-dir work_dirs/refactor_check] [--results-dir docs/results]

Each commit runs in a git worktree of its own under the work dir
(``mmsiameseim_lab.refactor_check``); the results file
``refactor_check.json`` holds both sides and whether each is bit-identical
(docs/code_layout.md renders it). Exit status 1 when a number differs.
"""
import argparse
import os.path as osp


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--before', required=True, help='the old commit')
    parser.add_argument('--after', default='HEAD', help='the new commit')
    parser.add_argument('--work-dir', default='work_dirs/refactor_check')
    parser.add_argument(
        '--results-dir', default=None, help='default docs/results')
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    from mmsiameseim_lab.refactor_check import compare
    from mmsiameseim_lab.results import write_results
    data = compare(args.before, args.after, osp.abspath(args.work_dir))
    path = write_results('refactor_check', data, results_dir=args.results_dir)
    for kind, same in data['identical'].items():
        print(f'{kind}: {"identical" if same else "DIFFERENT"}')
    print(f'results file: {path}')
    return 0 if all(data['identical'].values()) else 1


if __name__ == '__main__':
    raise SystemExit(main())
