"""The claim study's tests: Welch, paired and one-sample t p-values against
hand computation and scipy, Holm's correction on the textbook example, and
the verdicts drawn from them."""
import math

import pytest
from scipy import stats

from projects.claim.statistics import (format_p, holm, judge, one_sample_p,
                                       paired_p, verdict, welch_p)


def test_welch_p_matches_the_hand_computation_and_scipy():
    a, b = [1, 2, 3, 4, 5], [2, 4, 6, 8, 10]
    # by hand: variances 2.5 and 10, se^2 = 2.5/5 + 10/5 = 2.5,
    # t = (3 - 6) / sqrt(2.5) = -1.897, Welch-Satterthwaite
    # df = 2.5^2 / (0.5^2/4 + 2^2/4) = 5.882
    t, df = -3 / math.sqrt(2.5), 6.25 / (0.25 / 4 + 4 / 4)
    assert df == pytest.approx(5.882, abs=1e-3)
    by_hand = 2 * stats.t.sf(abs(t), df)
    assert welch_p(a, b) == pytest.approx(by_hand, rel=1e-12)
    assert welch_p(a, b) == pytest.approx(
        stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9)
    assert welch_p(a, b) == pytest.approx(0.1075, abs=1e-4)
    # five seeds a side, unequal spreads
    x = [77.6, 78.1, 76.9, 77.2, 78.0]
    y = [77.5, 77.3, 77.6, 77.2, 77.4]
    assert welch_p(x, y) == pytest.approx(
        stats.ttest_ind(x, y, equal_var=False).pvalue, rel=1e-9)
    assert welch_p([1.0], [2.0, 3.0]) is None
    assert welch_p([1.0, 1.0], [2.0, 2.0]) == 0.0


def test_paired_and_one_sample_p_match_scipy():
    run = [77.6, 78.1, 76.9, 77.2, 78.0]
    start = [65.2, 67.2, 63.0, 64.8, 66.0]
    assert paired_p(run, start) == pytest.approx(
        stats.ttest_rel(run, start).pvalue, rel=1e-9)
    assert one_sample_p(run, 77.0) == pytest.approx(
        stats.ttest_1samp(run, 77.0).pvalue, rel=1e-9)
    # by hand: mean 77.56, squared deviations sum to 1.052, sd
    # sqrt(1.052 / 4) = 0.5128, t = 0.56 / (0.5128 / sqrt 5) = 2.442
    t = 0.56 / (math.sqrt(1.052 / 4) / math.sqrt(5))
    assert t == pytest.approx(2.442, abs=1e-3)
    assert one_sample_p(run, 77.0) == pytest.approx(
        2 * stats.t.sf(t, 4), rel=1e-9)
    with pytest.raises(ValueError, match='5 values against 4'):
        paired_p(run, start[:4])


def test_holm_on_the_textbook_example():
    # Holm (1979) as in the usual textbook example: four hypotheses,
    # p = 0.01, 0.04, 0.03, 0.005 at alpha 0.05. Sorted 0.005, 0.01, 0.03,
    # 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04, made monotone:
    # 0.02, 0.03, 0.06, 0.06 -> the first two rejected, the others not.
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p < 0.05 for p in adjusted] == [True, False, False, True]
    # None does not count in m; capped at 1
    assert holm([None, 0.5, 0.6]) == [None, 1.0, 1.0]
    assert holm([]) == []


def test_verdicts_follow_the_adjusted_p_and_the_expected_sign():
    assert verdict(+1.2, 0.01, +1) == 'holds'
    assert verdict(-1.2, 0.01, +1) == 'reversed'
    assert verdict(-1.2, 0.01, -1) == 'holds'
    assert verdict(+1.2, 0.05, +1) == 'undecided'
    assert verdict(+1.2, None, +1) == 'undecided'
    # each p alone below 0.05; after Holm over the family one is not
    family = judge([
        dict(diff=2.0, p=0.02, expected_sign=1),
        dict(diff=-1.0, p=0.03, expected_sign=1),
        dict(diff=0.5, p=0.04, expected_sign=1),
    ])
    assert [c['p_holm'] for c in family] == pytest.approx([0.06, 0.06, 0.06])
    assert {c['verdict'] for c in family} == {'undecided'}
    family = judge([
        dict(diff=2.0, p=0.001, expected_sign=1),
        dict(diff=-1.0, p=0.01, expected_sign=1),
        dict(diff=0.5, p=0.5, expected_sign=1),
    ])
    assert [c['verdict'] for c in family] == \
        ['holds', 'reversed', 'undecided']
    assert format_p(0.00001) == '< 0.0001' and format_p(0.01234) == '0.0123'
