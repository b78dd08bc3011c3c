"""The paper's claim in miniature: SiameseIM, MAE and MoCo-v3 on Fashion-MNIST.

    python tools/studies/claim_study.py [--only table|curve] [--methods a,b]
        [--max-runs N] [--work-dir work_dirs/claim] [--holdout N] [--smoke]
        [--config configs/demo/claim_study.py] [--cfg-options K=V ...]
        [--results-dir docs/results]

Every method of the study config pretrains with every seed at one budget
(the table), then longer for the learning curve; each run is scored by the
demo's frozen-backbone protocol (kNN, linear probe, 1 % few-shot; the curve
skips the linear probe) and the dense probe on mosaics, the table runs also
at their own initial weights; raw pixels are the other floor. After every
run the results file ``claim.json`` is rewritten (``--results-dir``:
docs/results, rendered by tools/docs/render_results.py; ``--smoke`` or
``--holdout``: the work dir) with the charts in ``--figures-dir``. A rerun
skips the runs recorded in the results file under the same settings, and a
killed pretraining resumes, so the study may span sessions: ``--max-runs``
stops after that many new runs.

``--holdout N`` scores on N held-out training images instead of the test
set (results file ``claim_holdout.json``, evaluations in
``WORK_DIR/holdoutN``, the pretrainings shared with the test runs): for
choosing settings without the test images. A ``--results-name`` of its own
keeps its evaluations apart too (``WORK_DIR[/holdoutN]/NAME``), e.g. the
curve scored with another feature::

    python tools/studies/claim_study.py --only curve \
        --results-name claim_token_map --cfg-options features.siameseim=featmap
"""
import argparse
import os
import os.path as osp
import time

from mmengine.config import Config, DictAction

from mmsiameseim_lab.demo.cli import (ROOT, build_protocol, check_dataset,
                                      precision_override, say)

CONFIG = 'configs/demo/claim_study.py'
SMOKE_CONFIG = 'configs/demo/claim_study_smoke.py'


def run(args):
    from mmsiameseim.atomic_io import load_json
    from mmsiameseim_lab.claim import (check_features, check_study,
                                       claim_results_data, describe,
                                       figures_dir, pending, plot_claim,
                                       results_file, reusable_records,
                                       run_config, run_once, selected_runs,
                                       study_settings)
    from mmsiameseim_lab.demo import describe_pretraining
    from mmsiameseim_lab.evaluation import build_dense_probe
    from mmsiameseim_lab.results import write_results
    data_prefix = osp.abspath(args.data_root) + '/'
    check_dataset(data_prefix)
    study = Config.fromfile(
        osp.join(ROOT, args.config
                 or (SMOKE_CONFIG if args.smoke else CONFIG)))
    if args.cfg_options:
        study.merge_from_dict(args.cfg_options)
    check_study(study)
    runs = selected_runs(study, args)
    check_features(study, runs)
    wd = osp.abspath(args.work_dir)
    eval_dir = wd  # pretrainings shared, evaluations apart:
    if args.holdout:
        study.evaluation.update(holdout=args.holdout, test_samples=None)
        eval_dir = osp.join(eval_dir, f'holdout{args.holdout}')
    if args.results_name:
        eval_dir = osp.join(eval_dir, args.results_name)
    protocols = {  # each method's feature (study.features)
        m:
        build_protocol(
            Config(
                dict(
                    evaluation=dict(
                        study.evaluation,
                        feature=study.get('features', {}).get(
                            m, study.evaluation.get('feature',
                                                    'cls_token'))))), eval_dir,
            args.data_root)
        for m in study.methods
    }
    protocol = protocols[study.methods[0]]
    dense = build_dense_probe(protocol, study.get('dense'))
    settings = study_settings(study, protocols, dense, ROOT)
    name, folder = results_file(args)
    stored = load_json(osp.join(folder, f'{name}.json'))
    records = reusable_records(stored, settings, args.smoke)
    done = {r['key'] for r in records}
    floors = dict(knn=protocol.pixel_knn()['knn'], dense=dense.raw_pixels())
    precision = precision_override(False)
    pretraining = {  # each method's table run, in one sentence
        r['method']:
        describe_pretraining(
            run_config(study, r, wd, data_prefix, precision, ROOT))
        for r in reversed(runs) if r['table']
    }
    say(f'{len(runs)} runs selected, {sum(not pending(r, done) for r in runs)}'
        f' of them recorded in {name}.json')
    new = 0
    t0 = time.time()
    for n, r in enumerate(runs, 1):
        epochs = pending(r, done)
        if not epochs:
            continue
        if args.max_runs is not None and new >= args.max_runs:
            say(f'--max-runs {args.max_runs} reached: rerun to continue')
            break
        say(f'run {n}/{len(runs)}: {r["key"]} ({r["epochs"]} epoch(s), '
            f'{"table" if r["table"] else "curve"}, scored at epochs '
            f'{epochs}); progress and ETA below')
        cfg = run_config(study, r, wd, data_prefix, precision, ROOT)
        records += run_once(r, cfg, protocols[r['method']], dense, epochs)
        new += 1
        data = claim_results_data(study, records, floors, settings,
                                  describe(protocols, dense), pretraining,
                                  args.smoke, args.holdout)
        path = write_results(name, data, results_dir=folder)
        plot_claim(data, figures_dir(args, folder, name))
        say(f'{r["key"]} recorded in {path} '
            f'({(time.time() - t0) / 60:.1f} min so far)')
    if not new:
        say('nothing to run: every selected run is recorded')
    return osp.join(folder, f'{name}.json')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--config', default=None, help=f'settings (default {CONFIG})')
    parser.add_argument('--work-dir', default='work_dirs/claim')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument(
        '--only',
        choices=('table', 'curve'),
        default=None,
        help='only the table runs or only the curve runs')
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
        help='folder of the results file (default docs/results; with '
        '--smoke or --holdout the work dir)')
    parser.add_argument(
        '--results-name',
        default=None,
        help='name of the results file (default claim; with --holdout '
        'claim_holdout), its evaluations in WORK_DIR[/holdoutN]/NAME')
    parser.add_argument(
        '--figures-dir',
        default=None,
        help='folder of the charts (default docs/claim/figures for the '
        'published results file, else WORK_DIR/figures; /NAME for a '
        'results file other than claim.json)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    from mmsiameseim_lab.demo import quiet_console
    with quiet_console():
        return run(args)


if __name__ == '__main__':
    main()
