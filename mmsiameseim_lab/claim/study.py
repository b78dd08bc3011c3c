"""The paper's claim in miniature: SiameseIM against MAE and MoCo-v3 at one
budget, several seeds, the frozen-backbone protocol and a dense probe,
then a learning curve.

A study is a list of runs (method, seed, epochs), each a pretraining of its own
(its cosine schedule ends at its epochs) followed by the evaluation of one or
more of its epoch checkpoints. Each evaluated checkpoint becomes a record; the
records are the results file's data, so a study that spans sessions (whose work
dirs do not survive) continues from the results
file:
a checkpoint whose record is there, taken under the same settings, is not
evaluated again.
"""
import copy
import hashlib
import json
import os
import os.path as osp
import statistics
import time
from typing import Dict, List, Optional

from mmengine.config import Config

from ..evaluation import FrozenBackboneProtocol, MosaicDenseProbe
from ..evaluation.stored_results import settings_difference
from ..metrics import METRIC_NAMES, METRICS
from ..results import REPO


def run_key(method: str, seed: int, epochs: int) -> str:
    return f'{method}_seed{seed}_{epochs}e'


def record_key(run: dict, epoch: int) -> str:
    """The key of one evaluated checkpoint of a run: the run's key, and for
    a curve run the epoch of the checkpoint."""
    return run['key'] if run['table'] else f'{run["key"]}@{epoch}'


def planned_runs(study: Config) -> List[dict]:
    """Every run of the study, in order: the table runs seed by seed (each
    method's first seed before anyone's second), then one curve run per
    method, shortest first.

    A table run pretrains ``study.epochs`` (its cosine schedule ending
    there) and is evaluated at its end; a curve run pretrains the curve's
    longest budget once and is evaluated at each epoch of ``curve[method]``
    (the checkpoints of that one schedule).
    """
    runs = []
    for seed in study.seeds:
        for method in study.methods:
            key = run_key(method, seed, study.epochs)
            runs.append(
                dict(
                    key=key,
                    method=method,
                    seed=seed,
                    epochs=study.epochs,
                    table=True,
                    evaluate_at=[study.epochs]))
    curve = sorted((max(e), study.methods.index(m), m, sorted(e))
                   for m, e in study.get('curve', {}).items() if e)
    for epochs, _, method, at in curve:
        runs.append(
            dict(
                key=run_key(method, study.curve_seed, epochs),
                method=method,
                seed=study.curve_seed,
                epochs=epochs,
                table=False,
                evaluate_at=at))
    return runs


def pending(run: dict, done: set) -> List[int]:
    """The epochs of ``run`` whose record is not in ``done`` (keys)."""
    return [e for e in run['evaluate_at'] if record_key(run, e) not in done]


def check_study(study: Config) -> None:
    """Refuse a study whose methods, seeds or curve name nothing runnable;
    the message names the option."""
    unknown = [m for m in study.methods if m not in study.pretrain_configs]
    if unknown:
        raise ValueError(
            f'claim study: unknown methods {unknown}; methods are keys of '
            f'pretrain_configs {sorted(study.pretrain_configs)}')
    outside = [m for m in study.get('curve', {}) if m not in study.methods]
    if outside:
        raise ValueError(f'claim study: curve names {outside}, which are '
                         f'not in methods {list(study.methods)}')
    if not study.seeds:
        raise ValueError('claim study: seeds is empty')
    bad = [
        e for es in study.get('curve', {}).values()
        for e in es if int(e) != e or e < 1
    ] + ([study.epochs] if study.epochs < 1 else [])
    if bad:
        raise ValueError(f'claim study: epochs must be whole numbers >= 1, '
                         f'got {bad}')


def check_features(study: Config, runs: List[dict]) -> None:
    """Refuse a feature that cannot score the selected runs: the table
    runs' linear probe reads a pooled feature, so ``featmap`` (the token
    map: kNN, few-shot and the dense probe) is for curve runs only."""
    features = study.get('features', {})
    bad = sorted({
        r['method']
        for r in runs if r['table'] and features.get(r['method']) == 'featmap'
    })
    if bad:
        raise ValueError(
            'claim study: ' + ', '.join(f'features.{m}' for m in bad) +
            "='featmap' has no linear probe, which the table runs need: "
            'select the curve runs only (--only curve)')


def study_settings(study: Config, protocols: Dict[str, FrozenBackboneProtocol],
                   dense: MosaicDenseProbe, root: str) -> dict:
    """What a record depends on besides its method, seed and epochs: each
    method's evaluation, the dense probe, the pretraining configs (SHA-1 of
    their files; their bases are not followed) and the overrides.

    Paths of this checkout are left out, so that another clone continues the
    same study.
    """

    def portable(d):
        return {k: v for k, v in d.items() if k != 'data_prefix'}

    configs = {}
    for method in study.methods:
        with open(osp.join(root, study.pretrain_configs[method]), 'rb') as f:
            configs[method] = hashlib.sha1(f.read()).hexdigest()
    return dict(
        protocol={
            m: portable(p.settings())
            for m, p in protocols.items()
        },
        dense=portable(dense.settings()),
        pretrain_configs=configs,
        pretrain_overrides=study.pretrain_overrides,
        hook_overrides=study.hook_overrides)


def reusable_records(stored: Optional[dict],
                     settings: dict,
                     smoke: bool = False) -> List[dict]:
    """The records of a previous results file (its ``data``) taken under
    ``settings`` and of the same kind (smoke or not); none, with a printed
    reason, when they differ."""
    if not stored:
        return []
    data = stored.get('data', stored)
    if bool(data.get('smoke')) != bool(smoke):
        print(
            'claim study: the results file holds a '
            f'{"smoke" if data.get("smoke") else "full"} study; starting '
            'over',
            flush=True)
        return []
    differ = settings_difference(
        json.loads(json.dumps(data.get('settings', {}))),
        json.loads(json.dumps(settings, default=str)))
    if differ:
        print(
            'claim study: the results file was taken under other settings '
            f'({len(differ)} differ, e.g. {differ[0][:200]}); starting '
            'over',
            flush=True)
        return []
    return list(data.get('records', []))


def run_once(run: dict, cfg: Config, protocol: FrozenBackboneProtocol,
             dense: MosaicDenseProbe, epochs: List[int]) -> List[dict]:
    """Pretrain (or reuse) one run and evaluate its checkpoints of
    ``epochs``: a table run with the whole protocol and at its own initial
    weights, a curve run without the linear probe.

    Returns one record per epoch.
    """
    from mmsiameseim_lab.demo import initial_weights, pretrain_once
    from mmsiameseim_lab.results import git_output
    t0 = time.time()
    pre = pretrain_once(cfg)
    records = []
    for epoch in epochs:
        t1 = time.time()
        key = record_key(run, epoch)
        ckpt = osp.join(cfg.work_dir, f'epoch_{epoch}.pth')
        scores = protocol.evaluate(key, ckpt, cfg.model, linear=run['table'])
        scores.update(dense_scores(dense.evaluate(key, ckpt, cfg.model)))
        record = dict(
            key=key,
            method=run['method'],
            seed=run['seed'],
            epochs=epoch,
            schedule_epochs=run['epochs'],
            table=run['table'],
            curve=not run['table'],
            **{m: scores.get(m)
               for m in METRICS},
            dense_iou=scores['dense_iou'],
            images_per_s=pre['images_per_s'],
            pretrain_wall_s=pre['wall_s'],
            resumed=pre['resumed'],
            eval_wall_s=time.time() - t1,
            # a study spans sessions: each record says what code made it
            commit=git_output('rev-parse', 'HEAD'),
            load_avg_1min=round(os.getloadavg()[0], 2))
        if run['table']:
            start = initial_weights(pre)
            floor = protocol.evaluate(f'{key}_initial_weights', start,
                                      cfg.model)
            floor.update(
                dense_scores(
                    dense.evaluate(f'{key}_initial_weights', start,
                                   cfg.model)))
            record['initial_weights'] = {m: floor.get(m) for m in METRICS}
        records.append(record)
    records[-1]['wall_s'] = time.time() - t0
    return records


def describe(protocols: Dict[str, FrozenBackboneProtocol],
             dense: MosaicDenseProbe) -> List[str]:
    """Markdown bullets of the evaluation: the protocol, each method's
    feature, the dense probe."""
    first = next(iter(protocols.values()))
    lines = [x for x in first.describe() if not x.startswith('* Feature:')]
    lines.append('* Feature: ' + '; '.join(f'{m}: {p.feature_text()}'
                                           for m, p in protocols.items()) +
                 '.')
    return lines + dense.describe()


def dense_scores(result: dict) -> dict:
    return dict(
        dense_miou=result['miou'],
        dense_accuracy=result['accuracy'],
        dense_iou=result['iou'])


def run_config(study: Config, run: dict, work_dir: str, data_prefix: str,
               precision: Optional[str], root: str) -> Config:
    """The pretraining config of one run, set up for it: a curve run keeps
    every epoch's checkpoint."""
    from mmsiameseim_lab.demo import prepare_pretrain_cfg
    cfg = prepare_pretrain_cfg(
        Config.fromfile(osp.join(root, study.pretrain_configs[run['method']])),
        osp.join(work_dir, run['key']),
        data_prefix=data_prefix,
        overrides=copy.deepcopy(study.pretrain_overrides),
        hook_overrides=copy.deepcopy(study.hook_overrides),
        epochs=run['epochs'],
        seed=run['seed'],
        precision=precision)
    if not run['table']:
        cfg.default_hooks.checkpoint.update(interval=1, max_keep_ckpts=-1)
    return cfg


def summary(records: List[dict], methods: List[str]) -> Dict[str, dict]:
    """Method -> metric -> {mean, sd, min, max, n} over the table runs
    (and ``initial_weights`` over their floors)."""
    out = {}
    for method in methods:
        rows = [r for r in records if r['method'] == method and r['table']]
        if not rows:
            continue
        out[method] = dict(
            seeds=[r['seed'] for r in rows],
            scores=_stats([{
                m: r[m]
                for m in METRICS
            } for r in rows]),
            initial_weights=_stats([r['initial_weights'] for r in rows]))
    return out


def _stats(rows: List[dict]) -> Dict[str, dict]:
    out = {}
    for m in METRICS:
        v = [r[m] for r in rows if r.get(m) is not None]
        if v:
            out[m] = dict(
                mean=statistics.mean(v),
                sd=statistics.stdev(v) if len(v) > 1 else None,
                min=min(v),
                max=max(v),
                n=len(v))
    return out


def claim_results_data(study: Config,
                       records: List[dict],
                       floors: dict,
                       settings: dict,
                       protocol: List[str],
                       pretraining: Dict[str, str],
                       smoke: bool = False,
                       holdout: Optional[int] = None) -> dict:
    """The results file's data: the records, their summary, the floors and
    what produced them.

    Args:
        study (Config): The study settings.
        records (list[dict]): :func:`run_once` records.
        floors (dict): ``knn`` (raw pixels' kNN top-1) and ``dense`` (the
            raw-pixel dense probe's result).
        settings (dict): :func:`study_settings`.
        protocol (list[str]): Markdown bullets of the evaluation.
        pretraining (dict): Method -> one sentence on its pretraining.
        smoke (bool): Tiny subsets (numbers mean nothing).
        holdout (int, optional): Scored on held-out training images.
    """
    from mmsiameseim.evaluation import native_bf16
    return dict(
        methods=list(study.methods),
        seeds=list(study.seeds),
        epochs=study.epochs,
        curve={
            k: list(v)
            for k, v in study.get('curve', {}).items()
        },
        curve_seed=study.get('curve_seed', 0),
        records=records,
        summary=summary(records, list(study.methods)),
        raw_pixels=dict(
            knn=floors['knn'],
            dense_miou=floors['dense']['miou'],
            dense_accuracy=floors['dense']['accuracy']),
        protocol=protocol,
        pretraining=pretraining,
        native_bf16=native_bf16(),
        settings=json.loads(json.dumps(settings, default=str)),
        smoke=smoke,
        holdout=holdout)


# The paper's Table 1 (ViT-B/16, ImageNet): the metric of ours that each
# of its columns is miniaturised by -> method -> number.
PAPER_TABLE1 = {
    'linear': ('LIN', dict(siameseim=78.0, mocov3=76.7, mae=68.0)),
    'fewshot': ('FT 1 %', dict(siameseim=65.1, mocov3=63.4, mae=51.1)),
    'dense_miou': ('ADE20k mIoU', dict(siameseim=51.1, mocov3=47.3, mae=48.1)),
}
PAIRS = (('siameseim', 'mocov3'), ('siameseim', 'mae'), ('mocov3', 'mae'))


def welch_threshold(sa: dict, sb: dict, level: float = 0.95) -> float:
    """The smallest difference of two means (stats with ``mean``, ``sd``,
    ``n``) that a two-sided Welch t-test at ``level`` calls real: the
    t quantile at the Welch-Satterthwaite degrees of freedom times the
    standard error."""
    from scipy.stats import t
    va, vb = sa['sd']**2 / sa['n'], sb['sd']**2 / sb['n']
    if va + vb == 0:
        return 0.0
    df = (va + vb)**2 / (va**2 / (sa['n'] - 1) + vb**2 / (sb['n'] - 1))
    return float(t.ppf(0.5 + level / 2, df)) * (va + vb)**0.5


def orderings(summary_: Dict[str, dict]) -> List[dict]:
    """Each of the paper's pairwise orderings (:data:`PAPER_TABLE1`)
    against ours: the difference of our means, its standard error over
    the seeds and a verdict: 'holds' or 'reversed' when a two-sided Welch
    t-test at 95 % finds the difference (:func:`welch_threshold`), else
    'within the seed spread' ('one seed' when a side has a single run)."""
    out = []
    for metric, (column, paper) in PAPER_TABLE1.items():
        for a, b in PAIRS:
            sa = summary_.get(a, {}).get('scores', {}).get(metric)
            sb = summary_.get(b, {}).get('scores', {}).get(metric)
            if not sa or not sb or a not in paper or b not in paper:
                continue
            diff = sa['mean'] - sb['mean']
            paper_diff = paper[a] - paper[b]
            if sa['sd'] is None or sb['sd'] is None:
                se, verdict = None, 'one seed'
            else:
                se = (sa['sd']**2 / sa['n'] + sb['sd']**2 / sb['n'])**0.5
                if abs(diff) <= welch_threshold(sa, sb):
                    verdict = 'within the seed spread'
                else:
                    verdict = 'holds' if (diff > 0) == (paper_diff > 0) \
                        else 'reversed'
            out.append(
                dict(
                    metric=metric,
                    column=column,
                    a=a,
                    b=b,
                    paper=paper_diff,
                    ours=diff,
                    se=se,
                    verdict=verdict))
    return out


def claim_reading(data: dict, floors: bool = True) -> List[str]:
    """Sentences on what the results say, written from them: the paper's
    orderings by verdict, each method against its initial weights and
    raw pixels (``floors``), and whether SiameseIM's kNN passes raw pixels
    on the curve."""
    out = []
    by = {}
    for o in orderings(data['summary']):
        by.setdefault(o['verdict'], []).append(
            f'{o["a"]} vs {o["b"]} on {METRIC_NAMES[o["metric"]]} '
            f'({o["column"]})')
    heads = {
        'holds': 'The paper\'s orderings that hold here',
        'reversed': 'The paper\'s orderings reversed here',
        'within the seed spread': 'Undecided (within the seed spread)',
        'one seed': 'Undecided (one seed)'
    }
    for verdict, head in heads.items():
        if by.get(verdict):
            out.append(f'{head}: ' + '; '.join(by[verdict]) + '.')
    raw = data['raw_pixels']
    for method, s in data['summary'].items() if floors else ():
        sc, floor = s['scores'], s['initial_weights']
        above = [
            METRIC_NAMES[m] for m in METRICS
            if m in sc and m in floor and sc[m]['mean'] > floor[m]['mean']
        ]
        below = [
            METRIC_NAMES[m] for m in METRICS
            if m in sc and m in floor and sc[m]['mean'] <= floor[m]['mean']
        ]
        text = f'{method}: above its initial weights on ' + \
            (', '.join(above) or 'nothing')
        if below:
            text += f'; not above them on {", ".join(below)}'
        pix = [
            METRIC_NAMES[m] for m in ('knn', 'dense_miou')
            if m in sc and raw.get(m) is not None and sc[m]['mean'] > raw[m]
        ]
        text += '; above raw pixels on ' + (', '.join(pix) or 'neither kNN '
                                            'nor dense mIoU') + '.'
        out.append(text)
    curve = sorted((r['epochs'], r['knn']) for r in data['records']
                   if r['curve'] and r['method'] == 'siameseim')
    if curve:
        past = [e for e, k in curve if k > raw['knn']]
        out.append('Learning curve, on the pooled feature of the table: '
                   'SiameseIM\'s kNN ' +
                   (f'first passes raw pixels at epoch {past[0]} of its '
                    'curve run.' if past else 'stays below raw pixels up to '
                    f'epoch {curve[-1][0]}, the last point recorded.'))
    return out


# ---------------------------------------------------------------- tool side
# (``tools/studies/claim_study.py``'s options: ``--results-dir``,
# ``--results-name``, ``--figures-dir``, ``--only``, ``--methods``)
def results_file(args):
    name = args.results_name or ('claim_holdout' if args.holdout else 'claim')
    if args.results_dir:
        folder = osp.abspath(args.results_dir)
    elif args.smoke or args.holdout:
        folder = osp.abspath(args.work_dir)
    else:
        folder = osp.join(REPO, 'docs', 'results')
    return name, folder


def figures_dir(args, results_folder, name):
    """--figures-dir; else docs/claim/figures beside the published results
    file, or WORK_DIR/figures; another results file than claim.json draws
    into a NAME subfolder."""
    if args.figures_dir:
        return osp.abspath(args.figures_dir)
    if results_folder == osp.join(REPO, 'docs', 'results'):
        folder = osp.join(REPO, 'docs', 'claim', 'figures')
    else:
        folder = osp.join(osp.abspath(args.work_dir), 'figures')
    return folder if name == 'claim' else osp.join(folder, name)


def selected_runs(study, args):
    runs = planned_runs(study)
    if args.only:
        runs = [r for r in runs if r['table'] == (args.only == 'table')]
    if args.methods:
        runs = [r for r in runs if r['method'] in args.methods]
    return runs
