"""core.stats' means and mean differences against statsmodels, on data drawn by hypothesis."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from core import stats as m

ratings = st.lists(st.integers(min_value=1, max_value=5), min_size=2, max_size=60)


@settings(max_examples=80, deadline=None)
@given(ratings)
def test_unweighted_mean_and_interval_match_statsmodels(xs):
    got = m.weighted_mean([float(x) for x in xs])
    ref = DescrStatsW(np.array(xs, dtype=float))
    assert got.value == pytest.approx(ref.mean)
    assert got.se == pytest.approx(ref.std_mean, abs=1e-12)
    low, high = ref.zconfint_mean()
    assert got.ci[0] == pytest.approx(low, abs=1e-9)
    assert got.ci[1] == pytest.approx(high, abs=1e-9)
    assert got.effective_n == pytest.approx(len(xs))


@settings(max_examples=80, deadline=None)
@given(ratings, ratings)
def test_difference_matches_statsmodels_unequal_variances(a, b):
    got = m.mean_difference(m.weighted_mean(a), m.weighted_mean(b))
    ref = CompareMeans(DescrStatsW(np.array(a, float)), DescrStatsW(np.array(b, float)))
    low, high = ref.zconfint_diff(usevar="unequal")
    assert got.value == pytest.approx(np.mean(a) - np.mean(b))
    assert got.ci[0] == pytest.approx(low, abs=1e-9)
    assert got.ci[1] == pytest.approx(high, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 5), st.sampled_from([1.0, 2.0, 4.0, 10.0])),
        min_size=2,
        max_size=40,
    )
)
def test_weighted_mean_is_the_weighted_average_within_the_range(rows):
    xs, ws = [float(x) for x, _ in rows], [w for _, w in rows]
    got = m.weighted_mean(xs, ws)
    assert got.value == pytest.approx(np.average(xs, weights=ws))
    assert min(xs) - 1e-9 <= got.value <= max(xs) + 1e-9
    assert got.effective_n <= len(xs) + 1e-9
    assert got.ci[0] <= got.value <= got.ci[1]


def test_an_oversampled_value_counts_less():
    # Two calls drawn with probability 1 (weight 1) rated 5, one drawn with probability 0.1
    # (weight 10) rated 1: the population had many more calls like the third.
    got = m.weighted_mean([5.0, 5.0, 1.0], [1.0, 1.0, 10.0])
    assert got.value == pytest.approx(20 / 12)
    assert got.effective_n == pytest.approx(144 / 102)


def test_undefined_means_are_none():
    assert m.weighted_mean([]).value is None
    one = m.weighted_mean([4.0])
    assert one.value == 4.0 and one.ci is None and one.se is None
    d = m.mean_difference(one, m.weighted_mean([2.0, 3.0]))
    assert d.value == 1.5 and d.ci is None
    assert m.mean_difference(m.weighted_mean([]), one).value is None
    with pytest.raises(ValueError):
        m.weighted_mean([1.0], [1.0, 2.0])


def test_equal_values_have_a_zero_width_interval():
    got = m.weighted_mean([3.0, 3.0, 3.0])
    assert got.ci == (3.0, 3.0) and math.isclose(got.se, 0.0)
