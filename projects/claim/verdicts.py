"""What the claim study's records say, tested: every comparison of the
table in one Holm family (the paper's orderings at equal epochs and at
equal wall time, each method's gain over its own initial weights, each
method against the pixel floors), and the curve's key epochs in another
(their passes of the pixel floors, and their gains over each run's own
initial weights)."""
import statistics as st
from typing import Dict, List, Optional

from projects.claim.statistics import judge, one_sample_p, paired_p, welch_p
from projects.claim.study import PAIRS, PAPER_TABLE1
from projects.common.metrics import SCATTERED_METRICS

# every score of a table run: the pooled feature's, the dense probe's and
# the token map's
CLAIM_METRICS = ('knn', 'linear', 'fewshot', 'dense_miou', 'dense_accuracy',
                 'token_map_knn', 'token_map_fewshot')
# score -> (pixel floor, its metric): the floors each score is tested
# against (raw pixels, and for the token map also the random projection of
# the pixels to its width)
PIXEL_FLOORS = dict(
    knn=[('raw', 'knn')],
    linear=[('raw', 'linear')],
    fewshot=[('raw', 'fewshot')],
    dense_miou=[('dense', 'miou')],
    token_map_knn=[('raw', 'knn'), ('projection', 'knn')],
    token_map_fewshot=[('raw', 'fewshot'), ('projection', 'fewshot')])


def values(records: List[dict],
           method: str,
           metric: str,
           kind: str = 'table') -> Dict[int, float]:
    """Seed -> score of the method's records of ``kind``."""
    return {
        r['seed']: r[metric]
        for r in records if r.get('kind') == kind and r['method'] == method
        and r.get(metric) is not None
    }


def floor_values(records: List[dict], method: str,
                 metric: str) -> Dict[int, float]:
    return {
        r['seed']: r['initial_weights'][metric]
        for r in records if r.get('kind') == 'table' and r['method'] == method
        and r['initial_weights'].get(metric) is not None
    }


def paired_gain(after: Dict[int, float],
                before: Dict[int, float]) -> Optional[dict]:
    """Runs over their own initial weights, paired by seed: the seeds both
    sides hold, ``diff`` (the mean of each seed's difference), the mean
    ``initial_value`` and the paired t ``p``; None without a shared seed."""
    seeds = sorted(set(after) & set(before))
    if not seeds:
        return None
    a, b = [after[s] for s in seeds], [before[s] for s in seeds]
    return dict(
        seeds=seeds,
        diff=st.mean(x - y for x, y in zip(a, b)),
        initial_value=st.mean(b),
        p=paired_p(a, b))


def _stats(v: List[float]) -> Optional[dict]:
    if not v:
        return None
    return dict(
        mean=st.mean(v),
        sd=st.stdev(v) if len(v) > 1 else None,
        min=min(v),
        max=max(v),
        n=len(v))


def summary(records: List[dict], methods: List[str]) -> Dict[str, dict]:
    """Method -> ``seeds``, ``scores``, ``initial_weights``, ``gain``
    (metric -> stats over the seeds) and ``equal_time`` (its equal-time
    runs' scores, when it has them)."""
    out = {}
    for m in methods:
        rows = [
            r for r in records if r.get('kind') == 'table' and r['method'] == m
        ]
        if not rows:
            continue
        s = dict(seeds=sorted(r['seed'] for r in rows))
        for part, get in (('scores', lambda mt: values(records, m, mt)),
                          ('initial_weights',
                           lambda mt: floor_values(records, m, mt)),
                          ('equal_time',
                           lambda mt: values(records, m, mt, 'equal_time'))):
            # the scattered probe's other scores are summarised beside
            # them, but not tested (outside the Holm family)
            s[part] = {
                mt: _stats(list(get(mt).values()))
                for mt in CLAIM_METRICS + SCATTERED_METRICS if get(mt)
            }
        s['gain'] = {}
        for mt in CLAIM_METRICS + SCATTERED_METRICS:
            a, b = values(records, m, mt), floor_values(records, m, mt)
            seeds = sorted(set(a) & set(b))
            if seeds:
                s['gain'][mt] = _stats([a[x] - b[x] for x in seeds])
        out[m] = s
    return out


def table_comparisons(records: List[dict], methods: List[str],
                      floors: dict) -> List[dict]:
    """Every comparison of the table, with raw and Holm-adjusted p and a
    verdict (one family):

    * ``ordering``: the paper's pairwise orderings (Welch; the difference
      of means, the paper's sign expected), at equal epochs and, where a
      method has equal-time runs, at equal wall time;
    * ``gain``: each method's scores over its own initial weights (paired
      by seed; a gain expected);
    * ``pixels``: each method's mean against a pixel floor (one-sample; a
      score above the floor expected).
    """
    out = []
    for metric, (column, paper) in PAPER_TABLE1.items():
        for budget in ('table', 'equal_time'):
            for a, b in PAIRS:
                if a not in methods or b not in methods:
                    continue
                va, vb = (values(records, x, metric) for x in (a, b))
                if budget == 'equal_time':
                    # a method without equal-time runs: its table runs
                    # took the reference's time, or are the reference
                    ta, tb = (
                        values(records, x, metric, budget) for x in (a, b))
                    if not ta and not tb:
                        continue
                    va, vb = ta or va, tb or vb
                if not va or not vb:
                    continue
                diff = st.mean(va.values()) - st.mean(vb.values())
                out.append(
                    dict(
                        kind='ordering',
                        budget=budget,
                        metric=metric,
                        column=column,
                        a=a,
                        b=b,
                        paper=paper[a] - paper[b],
                        diff=diff,
                        p=welch_p(list(va.values()), list(vb.values())),
                        test='Welch',
                        expected_sign=1 if paper[a] > paper[b] else -1))
    for m in methods:
        for metric in CLAIM_METRICS:
            gain = paired_gain(
                values(records, m, metric), floor_values(records, m, metric))
            if gain is None:
                continue
            out.append(
                dict(
                    kind='gain',
                    method=m,
                    metric=metric,
                    diff=gain['diff'],
                    p=gain['p'],
                    test='paired t',
                    expected_sign=1))
        for metric, pairs in PIXEL_FLOORS.items():
            a = list(values(records, m, metric).values())
            for floor, fm in pairs:
                value = (floors.get(floor) or {}).get(fm)
                if not a or value is None:
                    continue
                out.append(
                    dict(
                        kind='pixels',
                        method=m,
                        metric=metric,
                        floor=floor,
                        floor_value=value,
                        diff=st.mean(a) - value,
                        p=one_sample_p(a, value),
                        test='one-sample t',
                        expected_sign=1))
    return judge(out)


# the curve's scores tested at its key epochs against each run's own
# initial weights (its epoch 0)
CURVE_GAIN_METRICS = ('knn', 'token_map_knn', 'dense_miou')


def curve_comparisons(records: List[dict], methods: List[str], floors: dict,
                      key_epochs: List[int]) -> List[dict]:
    """At each key epoch of the curve with two seeds or more, one family
    under Holm's correction (apart from the table's):

    * ``curve``: the pooled feature's and the token map's kNN against raw
      pixels' (and the token map's against the projection's), one-sample t
      over the seeds;
    * ``curve_gain``: kNN, token-map kNN and dense mIoU over the same
      runs' initial weights (epoch 0), paired by seed: whether the probe
      sees pretraining.
    """
    out = []
    for m in methods:
        curve = [
            r for r in records if r.get('kind') == 'curve' and r['method'] == m
        ]
        start = {r['seed']: r for r in curve if r['epochs'] == 0}
        for epoch in key_epochs:
            rows = [r for r in curve if r['epochs'] == epoch]
            if len(rows) < 2:
                continue
            for metric, pairs in (('knn', [
                ('raw', 'knn')
            ]), ('token_map_knn', PIXEL_FLOORS['token_map_knn'])):
                a = [r[metric] for r in rows]
                for floor, fm in pairs:
                    value = floors[floor][fm]
                    out.append(
                        dict(
                            kind='curve',
                            method=m,
                            epoch=epoch,
                            seeds=sorted(r['seed'] for r in rows),
                            metric=metric,
                            floor=floor,
                            floor_value=value,
                            diff=st.mean(a) - value,
                            p=one_sample_p(a, value),
                            test='one-sample t',
                            expected_sign=1))
            for metric in CURVE_GAIN_METRICS:
                gain = paired_gain({r['seed']: r[metric]
                                    for r in rows}, {
                                        s: r[metric]
                                        for s, r in start.items()
                                    })
                if gain is None or len(gain['seeds']) < 2:
                    continue
                out.append(
                    dict(
                        kind='curve_gain',
                        method=m,
                        epoch=epoch,
                        metric=metric,
                        test='paired t',
                        expected_sign=1,
                        **gain))
    return judge(out)
