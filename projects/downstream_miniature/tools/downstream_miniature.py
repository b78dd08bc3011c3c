"""Table 2 in miniature: backbones fine-tuned by the shipped ViTDet Mask
R-CNN and UperNet configs at the demo's size, several seeds each.

    python projects/downstream_miniature/tools/downstream_miniature.py
        [--tasks coco,lvis,ade20k] [--backbones siameseim,...]
        [--max-runs N] [--holdout | --lengths | --init-parts [SECTION] |
        --smoke] [--work-dir work_dirs/downstream_miniature]
        [--results-dir DIR] [--data-root data/fashion_mnist]
        [--config CONFIG] [--cfg-options K=V ...] [--dry-run]

Every (task, backbone, seed) of the settings runs the task's miniature
config through the codebase's training script (what `mim train` runs) in
``WORK_DIR/TASK/BACKBONE/seedS``, and is recorded in the results file
``downstream_miniature[_holdout].json`` (--results-dir) as soon as it ends (the
settings: ``--config``, projects/downstream_miniature/configs/): a rerun
skips the runs recorded under the same settings, so the study may span
sessions (``--max-runs`` stops after that many new runs). Each pretrained
backbone is compared with its own initial weights (Welch over the seeds,
Holm over the table), each task fine-tuned with the schedule that the
held-out search chose. ``--holdout`` is that search: every candidate
schedule of the settings (``schedules``) fits on the training images'
``*_fit`` part and is scored on ``*_holdout``, never on the validation
split; the best within the budget is recorded as ``chosen`` in
``downstream_miniature_holdout.json``, which the table reads
(``search.results``). The data come from
``projects/downstream_miniature/tools/make_miniature_downstream.py``
(data/miniature).
``--lengths`` fine-tunes the backbones of the settings' ``lengths`` with
longer schedules on the held-out split, outside the budget (how long a
fine-tune must be for pretraining to show), into
``downstream_miniature_lengths.json``, its work dirs under
``WORK_DIR/lengths``. ``--init-parts`` fine-tunes the variants of the
settings' ``init_parts`` (a checkpoint with some of its weights left at the
fine-tuning model's own initialisation; ``--backbones`` names variants) on
the held-out split, into ``downstream_miniature_init_parts.json``, its work
dirs under ``WORK_DIR/init_parts``; ``--init-parts init_parts_NAME`` runs
the section of that name (another task) into
``downstream_miniature_init_parts_NAME.json``, its work dirs under
``WORK_DIR/init_parts_NAME``. ``--smoke`` is the study's smoke
fingerprint (``smoke`` of the settings: two iterations a task on a small
build in the work dir, whose results file stays there).
"""
import argparse
import os.path as osp
import sys

from mmengine.config import Config, DictAction

from mmsiameseim.atomic_io import load_json
from projects.common.results import results_path, write_results
from projects.downstream_miniature.smoke import smoke_settings

from projects.downstream_miniature.study import (  # isort: skip
    choose_schedules, comparisons, init_part_runs, length_runs, planned_runs,
    resolve_claim_runs, resolve_schedules, results_data, run_once,
    run_settings, train_command)

ROOT = osp.dirname(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))


def names(text):
    return text.split(',') if text else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--config',
        default='projects/downstream_miniature/configs/downstream_miniature.py'
    )
    parser.add_argument('--work-dir', default='work_dirs/downstream_miniature')
    parser.add_argument('--tasks', type=names)
    parser.add_argument('--backbones', type=names)
    parser.add_argument('--max-runs', type=int)
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument('--holdout', action='store_true')
    kind.add_argument(
        '--lengths',
        action='store_true',
        help='the settings\' `lengths`: longer fine-tunes on the held-out '
        'split, beside the table')
    kind.add_argument(
        '--init-parts',
        nargs='?',
        const='init_parts',
        metavar='SECTION',
        help='the settings\' `init_parts` (or the `init_parts_NAME` '
        'section named): a checkpoint with some weights at the model\'s '
        'own initialisation, on the held-out split')
    kind.add_argument(
        '--smoke',
        action='store_true',
        help='the smoke fingerprint: settings\' `smoke`')
    parser.add_argument(
        '--results-dir',
        help='folder of the results file (default: the project\'s results/; '
        'the work dir with --smoke)')
    parser.add_argument(
        '--data-root',
        default='data/fashion_mnist',
        help='Fashion-MNIST, for --smoke\'s datasets')
    parser.add_argument(
        '--dry-run',
        action='store_true',
        help='print the pending runs\' commands and stop')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    args = parser.parse_args(argv)
    study = Config.fromfile(osp.join(ROOT, args.config))
    if args.cfg_options:
        study.merge_from_dict(args.cfg_options)
    work_dir = osp.abspath(args.work_dir)
    results_dir = work_dir if args.smoke else (
        args.results_dir and osp.abspath(args.results_dir))
    # what the run writes: the table (--smoke's too), or a results file of
    # its own (downstream_miniature_KIND.json)
    kind = ('lengths' if args.lengths else 'init_parts'
            if args.init_parts else 'holdout' if args.holdout else 'table')
    # the settings' section a length's or init part's run reads
    section = args.init_parts or kind
    try:
        if kind in ('lengths', 'init_parts'):
            # beside the table: one task, on the held-out split
            if args.tasks:
                raise ValueError(f'--{kind.replace("_", "-")} fine-tunes '
                                 f'the task of `{section}.task`; --tasks '
                                 'does not apply')
            runs = (
                length_runs(study, args.backbones) if args.lengths else
                init_part_runs(study, args.backbones, section))
            resolve_claim_runs(study, sorted({r['backbone'] for r in runs}))
            work_dir = osp.join(work_dir, section)
        else:
            if args.smoke:
                smoke_settings(
                    study,
                    osp.join(work_dir, 'smoke_root'),
                    args.data_root,
                    build=not args.dry_run)
            elif args.holdout:
                resolve_claim_runs(
                    study, args.backbones or list(study.search.backbones))
            else:
                resolve_claim_runs(study, args.backbones)
                resolve_schedules(study, args.tasks)
            runs = planned_runs(study, args.tasks, args.backbones,
                                args.holdout)
    except ValueError as e:
        sys.exit(f'error: {args.config}: {e}')
    # a length's or an init part's run is a held-out run
    holdout = kind != 'table'
    name = 'downstream_miniature' + ('' if kind == 'table' else f'_{section}')
    stored = load_json(stored_path := results_path(name, results_dir)) or {}
    records = stored.get('data', {}).get('runs', {})
    for run in runs:
        old = records.get(run['key'])
        want = run_settings(study, run, holdout)
        if old and {k: old.get(k) for k in want} != want:
            sys.exit(f'error: {stored_path} records {run["key"]} '
                     f'under other settings ({old}, now {want}): pass '
                     'another --results-dir or remove that record')
    pending = [r for r in runs if r['key'] not in records]
    print(f'{len(runs) - len(pending)} of {len(runs)} runs recorded; '
          f'{len(pending)} to run')
    if args.dry_run:
        for run in pending:
            print(' '.join(
                train_command(study, run, osp.join(work_dir, run['key']),
                              holdout)))
        return
    for run in pending[:args.max_runs]:
        print(f'== {run["key"]}')
        records[run['key']] = run_once(study, run, work_dir, holdout)
        rec = records[run['key']]
        print(f'{run["key"]}: {rec["metrics"]} in {rec["wall_s"] / 60:.1f} '
              'min' + ('' if rec['within_budget'] else
                       f' (over the {study.budget_minutes}-minute budget)') +
              ('; it predicted nothing above the test score threshold, so '
               'it scores 0' if rec['predicted_nothing'] else ''))
        data = results_data(
            study, records, kind, smoke=args.smoke, section=section)
        write_results(name, data, results_dir=results_dir)
    if kind in ('lengths', 'init_parts'):
        return
    if kind == 'holdout':
        ranking, chosen = choose_schedules(study, records)
        for row in ranking:
            print(f'{row["task"]} {row["schedule"]}: {row["metric"]} '
                  f'{row["score"]:.4g} in {row["wall_s"] / 60:.1f} min' +
                  ('' if row['within_budget'] else ' (over the budget)') +
                  (' <- chosen' if row['chosen'] else ''))
        return
    for row in comparisons(study, records):
        print(f'{row["task"]} {row["metric"]}: {row["backbone"]} '
              f'{row["mean"]:.4g} vs {row["baseline"]} '
              f'{row["baseline_mean"]:.4g}: {row["verdict"]}')


if __name__ == '__main__':
    main()
