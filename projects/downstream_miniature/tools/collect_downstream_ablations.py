"""Gather the held-out A/B runs of the miniature detection configs into a
results file.

    python projects/downstream_miniature/tools/collect_downstream_ablations.py
        [--config
        projects/downstream_miniature/configs/downstream_miniature_ablations.py]
        [--results-dir DIR]

Each run of the settings is a record of
``projects/downstream_miniature/tools/downstream_miniature.py
--holdout`` (its results file and key); its metrics come from its own
``vis_data/scalars.json``, what it changed from the config its Runner dumped
(compared with the ablation's reference run, and the reference with the
shipped config as the study resolves it today). Writes
``downstream_miniature_ablations.json`` in ``--results-dir`` (default:
projects/downstream_miniature/results); nothing is trained.
"""
import argparse
import os.path as osp
import sys

from mmengine.config import Config

from projects.common.results import write_results
from projects.downstream_miniature.ablations import collect

ROOT = osp.dirname(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))
NAME = 'downstream_miniature_ablations'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--config',
        default=osp.join('projects', 'downstream_miniature', 'configs',
                         'downstream_miniature_ablations.py'))
    parser.add_argument('--results-dir', default=None)
    args = parser.parse_args(argv)
    settings = Config.fromfile(osp.join(ROOT, args.config))
    data = collect(settings, ROOT)
    path = write_results(NAME, data, results_dir=args.results_dir)
    print(f'{path}: {sum(len(a["rows"]) for a in data["ablations"].values())}'
          f' rows of {len(data["ablations"])} ablations')


if __name__ == '__main__':
    sys.exit(main())
