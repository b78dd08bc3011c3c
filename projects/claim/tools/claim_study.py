"""The paper's claim in miniature: SiameseIM, MAE and MoCo-v3 on Fashion-MNIST.

    python projects/claim/tools/claim_study.py [--only
    search|table|equal_time|curve]
        [--methods a,b] [--max-runs N] [--work-dir work_dirs/claim]
        [--holdout N] [--smoke] [--config
        projects/claim/configs/claim_study.py]
        [--cfg-options K=V ...] [--results-dir DIR]

The study runs in phases (projects/claim/plan.py): a search of each
method's learning rate and weight decay and then of its frozen feature, on
held-out training images; the table (every method x seed at the chosen
settings, each run also scored at its own initial weights, beside raw
pixels and a random projection of them through the same protocol); an
equal-wall-time row; the learning curve (several seeds at its key epochs).
Every run is scored by the frozen-backbone protocol (kNN, linear probe, 1 %
few-shot; the curve skips the linear probe) on the chosen pooled feature
and on the token map, and by the dense probe. After every run the results
file ``claim.json`` is rewritten (``--results-dir``: projects/claim/results,
rendered by projects/common/tools/render_results.py; ``--smoke`` or
``--holdout``: the work dir) with the charts in ``--figures-dir``. A rerun
keeps the records taken under the current settings (each carries their
digest) and runs the rest, and a killed pretraining resumes, so the study
may span sessions:
``--max-runs`` stops after that many new runs.

``--holdout N`` scores the table and curve on N held-out training images
instead of the test set (results file ``claim_holdout.json``, evaluations in
``WORK_DIR/holdoutN``, the pretrainings shared with the test runs). A
``--results-name`` of its own keeps its evaluations apart
(``WORK_DIR/NAME``).
"""
import argparse
import os
import os.path as osp

from mmengine.config import Config, DictAction

from projects.demo.cli import ROOT, check_dataset, precision_override, say

CONFIG = 'projects/claim/configs/claim_study.py'
SMOKE_CONFIG = 'projects/claim/configs/claim_study_smoke.py'


def run(args):
    from mmsiameseim.atomic_io import load_json
    from projects.claim import (current_records, describe_study, figures_dir,
                                plot_claim, results_file, run_phases,
                                study_inputs)
    from projects.claim.data import FORMAT
    from projects.common.results import write_results
    data_prefix = osp.abspath(args.data_root) + '/'
    check_dataset(data_prefix)
    study = Config.fromfile(
        osp.join(ROOT, args.config
                 or (SMOKE_CONFIG if args.smoke else CONFIG)))
    if args.cfg_options:
        study.merge_from_dict(args.cfg_options)
    wd = osp.abspath(args.work_dir)
    eval_dir = wd  # pretrainings shared, evaluations apart
    if args.results_name:
        eval_dir = osp.join(eval_dir, args.results_name)
    precision = precision_override(False)
    name, folder = results_file(args)
    stored = (load_json(osp.join(folder, f'{name}.json')) or {}).get('data')
    if stored and (stored.get('format') != FORMAT
                   or bool(stored.get('smoke')) != bool(args.smoke)):
        say(f'{name}.json holds another kind of study: starting over')
        stored = None
    inputs = study_inputs(study, ROOT, eval_dir, args.data_root, wd,
                          data_prefix, precision, args.holdout, stored)
    if inputs.floors_kept:
        say(f'pixel floors: kept from {name}.json (the same settings and '
            'precision)')
    records = current_records(study, (stored or {}).get('records', []),
                              inputs.scorer, ROOT)
    say(f'{len(records)} record(s) of {name}.json taken under the current '
        'settings')

    def write(records):
        data = inputs.data(records, describe_study(inputs), args.smoke,
                           args.holdout)
        path = write_results(name, data, results_dir=folder)
        plot_claim(data, figures_dir(args, folder, name))
        return path

    new = run_phases(study, records, inputs.scorer, args, ROOT, wd,
                     data_prefix, precision, write, say)
    if not new:
        say('nothing to run: every selected run is recorded')
        write(records)
    return osp.join(folder, f'{name}.json')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--config', default=None, help=f'settings (default {CONFIG})')
    parser.add_argument('--work-dir', default='work_dirs/claim')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument(
        '--only',
        choices=('search', 'table', 'equal_time', 'curve'),
        default=None,
        help='only this phase (the earlier ones must be recorded)')
    parser.add_argument(
        '--methods',
        default=None,
        type=lambda s: [m.strip() for m in s.split(',') if m.strip()],
        help='only these methods, e.g. siameseim,mae')
    parser.add_argument(
        '--max-runs',
        type=int,
        default=None,
        help='stop after this many new runs (each is recorded)')
    parser.add_argument(
        '--holdout',
        type=int,
        default=None,
        help='score on this many held-out training images, not the test '
        'set (claim_holdout.json in the work dir)')
    parser.add_argument(
        '--smoke',
        action='store_true',
        help='tiny subsets, for CI: checks every stage runs')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override settings, e.g. seeds=[0]')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='folder of the results file (default: its project\'s results/ '
        '(projects/claim/results); with --smoke or --holdout the work dir)')
    parser.add_argument(
        '--results-name',
        default=None,
        help='name of the results file (default claim; with --holdout '
        'claim_holdout), its evaluations in WORK_DIR[/holdoutN]/NAME')
    parser.add_argument(
        '--figures-dir',
        default=None,
        help='folder of the charts (default: the figures/ beside a '
        'published results file, else WORK_DIR/figures; /NAME for a '
        'results file other than claim.json)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    from projects.demo import quiet_console
    with quiet_console():
        return run(args)


if __name__ == '__main__':
    main()
