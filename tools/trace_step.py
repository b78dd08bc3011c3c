"""Which plugin files one training step runs, and how many lines they are.

    python tools/trace_step.py [--config CONFIG] [--label after]
        [--results-dir docs/results]

Two images through the config's dataset, collate, data preprocessor and
``loss``, traced (``mmsiameseim_lab.code_trace``). The results file
``code_trace.json`` keeps one snapshot per ``--label`` (each with its
commit): run it with ``--label before`` in a checkout of the old code (its
folder first on PYTHONPATH) and ``--label after`` here, into one results
folder. docs/code_layout.md renders the file.
"""
import argparse
import os.path as osp

from mmengine.config import DictAction

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
CONFIG = ('configs/pretrain/'
          'siameseim_vit-base-p16_16xb256-amp-coslr-400e_folder.py')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--config', default=CONFIG)
    parser.add_argument('--label', default='after')
    parser.add_argument(
        '--results-dir', default=None, help='default docs/results')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    return parser.parse_args(argv)


def main(argv=None) -> str:
    args = parse_args(argv)
    from mmsiameseim_lab.code_trace import trace_snapshot
    from mmsiameseim_lab.results import (git_output, read_results,
                                         results_path, write_results)
    config = args.config if osp.isabs(args.config) else osp.join(
        ROOT, args.config)
    snapshot = trace_snapshot(config, args.cfg_options)
    snapshot['config'] = args.config
    snapshot['commit'] = git_output('rev-parse', 'HEAD')
    data = dict(snapshots={})
    if osp.exists(results_path('code_trace', args.results_dir)):
        data = read_results('code_trace', args.results_dir)['data']
    data['snapshots'][args.label] = snapshot
    path = write_results('code_trace', data, results_dir=args.results_dir)
    print(f'{args.label}: {snapshot["total_files"]} files, '
          f'{snapshot["total_lines"]} lines, {snapshot["total_code_lines"]} '
          f'code lines -> {path}')
    return path


if __name__ == '__main__':
    main()
