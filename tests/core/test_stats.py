"""core.stats against scikit-learn and statsmodels, on random data drawn by hypothesis."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score
from statsmodels.stats.proportion import proportion_confint

from core import stats as m

# (judge flagged, truth is "broken") pairs: y_pred = flagged, y_true = broken.
labels = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=0, max_size=200)
weights = st.floats(min_value=1.0, max_value=80.0, allow_nan=False)


def counts(pairs):
    tp = sum(1 for p, t in pairs if p and t)
    fp = sum(1 for p, t in pairs if p and not t)
    fn = sum(1 for p, t in pairs if not p and t)
    tn = sum(1 for p, t in pairs if not p and not t)
    return tp, fp, fn, tn


def wilson_ref(k, n):
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return lo, hi


def approx_pair(got, want, tol=1e-9):
    assert got is not None
    assert got[0] == pytest.approx(want[0], abs=tol)
    assert got[1] == pytest.approx(want[1], abs=tol)


@given(st.integers(min_value=0, max_value=5000), st.integers(min_value=1, max_value=5000))
def test_wilson_matches_statsmodels(k, n):
    k = min(k, n)
    approx_pair(m.wilson_interval(k, n), wilson_ref(k, n))


def test_wilson_of_nothing_is_none():
    assert m.wilson_interval(0, 0) is None
    assert m.proportion(0, 0) is None


def test_design_example_figures():
    # docs/contract.md: tp 40, fp 6, fn 9 gives precision 0.8696
    # [0.7433, 0.9388], recall 0.8163 [0.6864, 0.9002].
    p = m.precision(40, 6)
    r = m.recall(40, 9)
    assert round(p.value, 4) == 0.8696
    assert [round(x, 4) for x in p.ci] == [0.7433, 0.9388]
    assert round(r.value, 4) == 0.8163
    assert [round(x, 4) for x in r.ci] == [0.6864, 0.9002]


@settings(max_examples=200)
@given(labels)
def test_precision_recall_f1_specificity_match_sklearn(pairs):
    tp, fp, fn, tn = counts(pairs)
    y_pred = [p for p, _ in pairs]
    y_true = [t for _, t in pairs]
    p, r, f, s = m.precision(tp, fp), m.recall(tp, fn), m.f1(tp, fp, fn), m.specificity(tn, fp)
    if tp + fp == 0:
        assert p.value is None and p.ci is None
    else:
        assert p.value == pytest.approx(precision_score(y_true, y_pred, zero_division=np.nan))
        approx_pair(p.ci, wilson_ref(tp, tp + fp))
    if tp + fn == 0:
        assert r.value is None and r.ci is None
    else:
        assert r.value == pytest.approx(recall_score(y_true, y_pred, zero_division=np.nan))
        approx_pair(r.ci, wilson_ref(tp, tp + fn))
    if tp + fp + fn == 0:
        assert f.value is None and f.ci is None
    else:
        assert f.value == pytest.approx(f1_score(y_true, y_pred, zero_division=np.nan))
        assert f.ci[0] <= f.value <= f.ci[1]
    if tn + fp == 0:
        assert s.value is None
    else:
        # Specificity is the recall of the negative class.
        assert s.value == pytest.approx(
            recall_score(y_true, y_pred, pos_label=False, zero_division=np.nan)
        )
        approx_pair(s.ci, wilson_ref(tn, tn + fp))


@settings(max_examples=200)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), weights), min_size=1, max_size=150))
def test_weighted_precision_recall_match_sklearn(rows):
    y_pred = [p for p, _, _ in rows]
    y_true = [t for _, t, _ in rows]
    w = [x for _, _, x in rows]
    sums = {c: 0.0 for c in ("tp", "fp", "fn", "tn")}
    sums2 = dict(sums)
    for p, t, x in rows:
        cell = m.outcome(p, not (p ^ t))  # correct when the judge agrees with the truth
        sums[cell] += x
        sums2[cell] += x * x
    wp = m.weighted_estimate(sums["tp"], sums["fp"], sums2["tp"], sums2["fp"])
    wr = m.weighted_estimate(sums["tp"], sums["fn"], sums2["tp"], sums2["fn"])
    wf = m.weighted_f1(sums["tp"], sums["fp"], sums["fn"], sums2["tp"], sums2["fp"], sums2["fn"])
    if any(y_pred):
        want = precision_score(y_true, y_pred, sample_weight=w, zero_division=np.nan)
        assert wp.value == pytest.approx(want)
        flagged_w = [x for p, _, x in rows if p]
        n_eff = sum(flagged_w) ** 2 / sum(x * x for x in flagged_w)
        assert wp.n == pytest.approx(n_eff)
        assert wp.ci == pytest.approx(m.wilson_from_proportion(want, n_eff))
    else:
        assert wp.value is None and wp.ci is None
    if any(y_true):
        assert wr.value == pytest.approx(
            recall_score(y_true, y_pred, sample_weight=w, zero_division=np.nan)
        )
    else:
        assert wr.value is None
    if any(y_true) or any(y_pred):
        assert wf.value == pytest.approx(
            f1_score(y_true, y_pred, sample_weight=w, zero_division=np.nan)
        )


@given(st.lists(st.floats(min_value=0.01, max_value=100), min_size=1, max_size=100))
def test_kish_effective_n_bounds(w):
    n_eff = m.kish_effective_n(sum(w), sum(x * x for x in w))
    assert 1 - 1e-9 <= n_eff <= len(w) + 1e-9
    if len(set(w)) == 1:
        assert n_eff == pytest.approx(len(w))


@given(st.integers(0, 1000), st.integers(1, 1000))
def test_wilson_on_equal_weights_is_the_plain_interval(k, n):
    k = min(k, n)
    e = m.weighted_estimate(3.0 * k, 3.0 * (n - k), 9.0 * k, 9.0 * (n - k))
    approx_pair(e.ci, wilson_ref(k, n), tol=1e-7)


@settings(max_examples=300)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=120))
def test_cohen_kappa_and_agreement_match_sklearn(pairs):
    table = m.AgreementTable(
        both_right=sum(1 for a, b in pairs if a and b),
        first_right=sum(1 for a, b in pairs if a and not b),
        second_right=sum(1 for a, b in pairs if not a and b),
        both_wrong=sum(1 for a, b in pairs if not a and not b),
    )
    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    assert m.percent_agreement(table) == pytest.approx(sum(a == b for a, b in pairs) / len(pairs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = cohen_kappa_score(first, second)
    got = m.cohen_kappa(table)
    if math.isnan(want):
        assert got is None
    else:
        assert got == pytest.approx(want)


def test_kappa_without_pairs_is_none():
    assert m.cohen_kappa(m.AgreementTable()) is None
    assert m.percent_agreement(m.AgreementTable()) is None


def test_majority_leaves_ties_unsettled_and_settlement_wins():
    assert m.majority(2, 1) is True
    assert m.majority(1, 2) is False
    assert m.majority(1, 1) is None
    assert m.majority(1, 1, settled=False) is False
    assert m.majority(3, 0, settled=False) is False


def test_outcome_cells():
    assert [
        m.outcome(True, True),
        m.outcome(True, False),
        m.outcome(False, True),
        m.outcome(False, False),
    ] == ["tp", "fp", "tn", "fn"]


FLOORS = m.Floors(
    min_marks=200, precision=0.80, recall=0.70, safety_precision=0.85, safety_recall=0.90
)


def test_eligibility_reasons():
    floors = FLOORS
    assert m.why_not_eligible(
        marked=163, precision_ci=(0.9, 0.95), recall_ci=(0.8, 0.9), floors=floors
    ) == ["needs 37 more marks"]
    assert m.why_not_eligible(
        marked=214, precision_ci=(0.7433, 0.9388), recall_ci=(0.61, 0.8), floors=floors
    ) == [
        "precision lower bound 0.74 < 0.80",
        "recall lower bound 0.61 < 0.70",
    ]
    assert m.why_not_eligible(
        marked=214, precision_ci=(0.85, 0.95), recall_ci=(0.6864, 0.9), floors=floors
    ) == ["recall lower bound 0.69 < 0.70"]
    # Rounding never prints a bound equal to its floor.
    assert m.why_not_eligible(
        marked=300, precision_ci=(0.81, 0.9), recall_ci=(0.6996, 0.9), floors=floors
    ) == ["recall lower bound 0.6996 < 0.70"]
    assert m.why_not_eligible(
        marked=300, precision_ci=None, recall_ci=(0.8, 0.9), floors=floors
    ) == ["precision unknown: no flagged verdict marked"]
    assert (
        m.why_not_eligible(
            marked=300, precision_ci=(0.81, 0.9), recall_ci=(0.75, 0.9), floors=floors
        )
        == []
    )


def test_safety_rules_use_stricter_floors():
    floors = FLOORS
    ok = {"marked": 300, "precision_ci": (0.82, 0.95), "recall_ci": (0.88, 0.95), "floors": floors}
    assert m.why_not_eligible(**ok) == []
    assert m.why_not_eligible(**ok, safety=True) == [
        "precision lower bound 0.82 < 0.85 (safety rule)",
        "recall lower bound 0.88 < 0.90 (safety rule)",
    ]


@given(st.integers(0, 400), st.integers(0, 400), st.integers(0, 400))
def test_f1_interval_contains_f1(tp, fp, fn):
    e = m.f1(tp, fp, fn)
    if tp + fp + fn == 0:
        assert e.value is None
    else:
        assert 0 <= e.ci[0] <= e.value <= e.ci[1] <= 1


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=60))
def test_percentile_interval_contains_the_percentile(values):
    p = m.percentile(values, 95)
    lo, hi = m.percentile_interval(values, 95)
    assert lo <= p <= hi
    assert p in values


def test_moved_needs_intervals_that_do_not_overlap():
    assert m.moved((0.0, 0.1), (0.2, 0.4))
    assert not m.moved((0.0, 0.25), (0.2, 0.4))
    assert not m.moved(None, (0.2, 0.4))
    assert m.moved(m.wilson_interval(0, 100), m.wilson_interval(30, 100))
    assert not m.moved(
        m.wilson_interval(1, 8), m.wilson_interval(2, 8)
    )  # eight calls cannot tell 1 from 2


def test_mean_interval_is_none_for_one_value_and_symmetric_otherwise():
    assert m.mean_interval([3.0]) is None
    lo, hi = m.mean_interval([1.0, 2.0, 3.0])
    assert math.isclose((lo + hi) / 2, 2.0)


@given(
    p=st.floats(min_value=0.01, max_value=1.0),
    floor=st.floats(min_value=0.0, max_value=0.99),
)
def test_marks_to_clear_is_the_first_n_whose_lower_bound_reaches_the_floor(p, floor):
    n = m.marks_to_clear(p, floor, limit=20_000)
    if p <= floor:
        assert n is None
        return
    if n is None:  # too close to the floor to clear within the limit
        assert m.wilson_from_proportion(p, 20_000)[0] < floor
        return
    assert m.wilson_from_proportion(p, n)[0] >= floor
    assert n == 1 or m.wilson_from_proportion(p, n - 1)[0] < floor


def test_marks_to_clear_examples():
    assert m.marks_to_clear(None, 0.8) is None and m.marks_to_clear(0.8, 0.8) is None
    n = m.marks_to_clear(0.95, 0.8)
    low = m.wilson_interval(0.95 * n, n)[0]
    assert low >= 0.8 > m.wilson_interval(0.95 * (n - 1), n - 1)[0]
    assert 20 < n < 40
