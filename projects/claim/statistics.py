"""The claim study's tests: two-sided t-tests over seeds and Holm's
correction over a family of comparisons, with a verdict for each.

Three tests, each where it fits the comparison:

* :func:`welch_p`: two methods (independent runs; Welch, unequal variances).
* :func:`paired_p`: a run against its own initial weights (the same seeds:
  each pair is one run before and after pretraining).
* :func:`one_sample_p`: runs against a fixed floor (raw pixels: one number,
  no seed).

A verdict is ``holds`` (the Holm-adjusted p is below ``alpha`` and the
difference has the expected sign), ``reversed`` (below ``alpha``, the other
sign) or ``undecided``.
"""
import math
import statistics
from typing import List, Optional, Sequence

ALPHA = 0.05
VERDICTS = ('holds', 'reversed', 'undecided')


def _t_two_sided(t: float, df: float) -> float:
    from scipy.stats import t as student_t
    return float(2 * student_t.sf(abs(t), df))


def welch_p(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
    """Two-sided Welch t-test p of mean(a) != mean(b); None with fewer than
    two values a side.

    Two constant samples: 0 if their means differ, else
    1.
    """
    if len(a) < 2 or len(b) < 2:
        return None
    va = statistics.variance(a) / len(a)
    vb = statistics.variance(b) / len(b)
    diff = statistics.mean(a) - statistics.mean(b)
    if va + vb == 0:
        return 0.0 if diff else 1.0
    df = (va + vb)**2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return _t_two_sided(diff / math.sqrt(va + vb), df)


def one_sample_p(a: Sequence[float], value: float) -> Optional[float]:
    """Two-sided one-sample t-test p of mean(a) != value."""
    if len(a) < 2:
        return None
    se = statistics.stdev(a) / math.sqrt(len(a))
    diff = statistics.mean(a) - value
    if se == 0:
        return 0.0 if diff else 1.0
    return _t_two_sided(diff / se, len(a) - 1)


def paired_p(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
    """Two-sided paired t-test p of mean(a - b) != 0 (a[i] and b[i] of the
    same seed)."""
    if len(a) != len(b):
        raise ValueError(f'paired_p: {len(a)} values against {len(b)}')
    return one_sample_p([x - y for x, y in zip(a, b)], 0.0)


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
    """Holm's step-down adjusted p-values, in the input order (None stays.

    None and does not count): the i-th smallest of m is multiplied by
    m - i (i from 0), then made non-decreasing, capped at 1.
    """
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(known)
    out: List[Optional[float]] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def verdict(diff: float,
            p_adjusted: Optional[float],
            expected_sign: int,
            alpha: float = ALPHA) -> str:
    """'holds' / 'reversed' when ``p_adjusted`` < ``alpha`` and ``diff``
    has / has not the ``expected_sign`` (+1 or -1), else 'undecided'."""
    if p_adjusted is None or p_adjusted >= alpha or diff == 0:
        return 'undecided'
    return 'holds' if (diff > 0) == (expected_sign > 0) else 'reversed'


def judge(comparisons: List[dict], alpha: float = ALPHA) -> List[dict]:
    """Add ``p_holm`` and ``verdict`` to each comparison (dicts with
    ``diff``, ``p`` and ``expected_sign``), Holm's correction taken over
    all of them (one family)."""
    adjusted = holm([c['p'] for c in comparisons])
    for c, p in zip(comparisons, adjusted):
        c['p_holm'] = p
        c['verdict'] = verdict(c['diff'], p, c['expected_sign'], alpha)
    return comparisons


def format_p(p: Optional[float]) -> str:
    """A p-value for prose: 3 significant digits, '< 0.0001' below that."""
    if p is None:
        return 'n/a'
    return '< 0.0001' if p < 1e-4 else f'{p:.3g}'
