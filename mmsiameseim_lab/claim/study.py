"""The paper's Table 1 against the claim study's results, and the reading of
a results file of the first format (three seeds, 95 % Welch thresholds, no
correction): what the published claim*.json files of that format are
rendered with until the study is run again (format 2: verdicts.py)."""
import os.path as osp
import statistics
from typing import Dict, List

from ..metrics import METRIC_NAMES, METRICS
from ..results import REPO


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
