"""A judge against the truth, and two judges against each other: core.stats against scikit-learn
and statsmodels, on random rows drawn by hypothesis (errored answers and weights included)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, recall_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from core import stats as m

# (said: True flagged, False not, None errored; truth: True broken, False not, None unsettled; w)
said = st.one_of(st.booleans(), st.none())
truth = st.one_of(st.booleans(), st.none())
weight = st.floats(min_value=1.0, max_value=50.0, allow_nan=False)
rows_st = st.lists(st.tuples(said, truth, weight), min_size=0, max_size=150)
cells = st.integers(min_value=0, max_value=400)


def _kappa_ref(table):
    """statsmodels' kappa with its 95% interval (the same Fleiss-Cohen-Everitt variance)."""
    res = cohens_kappa(np.array(table, float), return_results=True)
    return res.kappa, res.kappa_low, res.kappa_upp


def _reference(rows, errors):
    """What the judge's answers count as, done by hand: the rows sklearn is given."""
    y_true, y_pred, w = [], [], []
    for s, t, wt in rows:
        if t is None:
            continue
        if s is None:
            if errors == "exclude":
                continue
            s = not t
        y_true.append(t)
        y_pred.append(s)
        w.append(wt)
    return np.array(y_true, bool), np.array(y_pred, bool), np.array(w)


@given(cells, cells, cells, cells)
def test_kappa_and_its_interval_match_statsmodels(a, b, c, d):
    est = m.kappa_estimate(a, b, c, d)
    total = a + b + c + d
    if total == 0:
        assert est.value is None and est.ci is None
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k, low, high = _kappa_ref([[a, b], [c, d]])
    if est.value is None:
        # chance agreement is 1: every answer in one row and one column
        assert (a + b in (0, total)) and (a + c in (0, total))
        return
    assert est.value == pytest.approx(k, abs=1e-9)
    if math.isnan(low):
        # statsmodels' variance came out a hair below zero (one rater constant): a point here
        assert est.ci[0] == pytest.approx(est.ci[1], abs=1e-6)
        return
    assert est.ci[0] == pytest.approx(max(-1.0, low), abs=1e-9)
    assert est.ci[1] == pytest.approx(min(1.0, high), abs=1e-9)
    assert -1.0 <= est.ci[0] <= est.value <= est.ci[1] <= 1.0


@given(rows_st, st.sampled_from(m.ERRORS))
def test_judge_agreement_matches_scikit_learn_raw_and_weighted(rows, errors):
    judged = m.confusion_from_rows(rows, errors=errors)
    y_true, y_pred, w = _reference(rows, errors)
    raw, weighted = m.judge_agreement(judged.raw), m.judge_agreement(judged.weighted)
    assert judged.errored == sum(1 for s, _, _ in rows if s is None)
    assert judged.unsettled == sum(1 for _, t, _ in rows if t is None)
    assert judged.errored_counted == (
        sum(1 for s, t, _ in rows if s is None and t is not None) if errors == "as_wrong" else 0
    )
    assert raw.n == len(y_true)
    if not len(y_true):
        assert raw.accuracy.value is None and raw.kappa.value is None
        return
    assert raw.accuracy.value == pytest.approx(accuracy_score(y_true, y_pred))
    right = int((y_true == y_pred).sum())
    lo, hi = proportion_confint(right, len(y_true), alpha=0.05, method="wilson")
    assert raw.accuracy.ci == pytest.approx((lo, hi), abs=1e-9)
    assert weighted.accuracy.value == pytest.approx(accuracy_score(y_true, y_pred, sample_weight=w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if y_true.any() or y_pred.any():
            assert raw.f1.value == pytest.approx(f1_score(y_true, y_pred))
            assert weighted.f1.value == pytest.approx(f1_score(y_true, y_pred, sample_weight=w))
        if (~y_true).any():
            assert raw.specificity.value == pytest.approx(
                recall_score(y_true, y_pred, pos_label=False)
            )
            assert weighted.specificity.value == pytest.approx(
                recall_score(y_true, y_pred, pos_label=False, sample_weight=w)
            )
        k = cohen_kappa_score(y_pred, y_true)
        kw = cohen_kappa_score(y_pred, y_true, sample_weight=w)
    if raw.kappa.value is None:
        assert len(set(y_true) | set(y_pred)) == 1  # one answer throughout: kappa is undefined
    else:
        assert raw.kappa.value == pytest.approx(k, abs=1e-9)
        assert weighted.kappa.value == pytest.approx(kw, abs=1e-9)
    n_eff = w.sum() ** 2 / (w**2).sum()
    assert weighted.effective_n == pytest.approx(n_eff)


@given(rows_st, st.floats(min_value=0.1, max_value=20.0))
def test_equal_weights_weigh_nothing(rows, w):
    """With one weight throughout, the weighted figures and intervals are the raw ones."""
    judged = m.confusion_from_rows([(s, t, w) for s, t, _ in rows], errors="as_wrong")
    raw, weighted = m.judge_agreement(judged.raw), m.judge_agreement(judged.weighted)
    for name in ("accuracy", "f1", "specificity", "kappa", "precision", "recall"):
        a, b = getattr(raw, name), getattr(weighted, name)
        assert (a.value is None) == (b.value is None)
        if a.value is not None:
            assert b.value == pytest.approx(a.value)
            assert b.ci == pytest.approx(a.ci, abs=1e-6)


@given(rows_st)
def test_as_wrong_never_reads_better_than_exclude(rows):
    """Counting an errored answer as wrong adds only wrong answers: accuracy can only fall."""
    ex = m.judge_agreement(m.confusion_from_rows(rows).raw).accuracy
    aw = m.judge_agreement(m.confusion_from_rows(rows, errors="as_wrong").raw).accuracy
    assume(ex.value is not None)
    assert aw.value <= ex.value + 1e-12
    assert aw.n >= ex.n


@given(st.lists(st.tuples(said, said, truth), max_size=150), st.sampled_from(m.ERRORS))
def test_two_judges_agreement_matches_scikit_learn(rows, errors):
    table = m.pair_table_from_rows(rows, errors=errors)
    a, b = [], []
    for x, y, t in rows:
        if None in (x, y):
            if errors == "exclude" or t is None:
                continue
            x = (not t) if x is None else x
            y = (not t) if y is None else y
        a.append(x)
        b.append(y)
    got = m.pair_agreement(table)
    assert got.n == len(a)
    if not a:
        assert got.agreement.value is None
        return
    same = sum(1 for x, y in zip(a, b) if x == y)
    assert got.agreement.value == pytest.approx(same / len(a))
    assert got.agreement.ci == pytest.approx(
        proportion_confint(same, len(a), alpha=0.05, method="wilson"), abs=1e-9
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = cohen_kappa_score(a, b)
    if got.kappa.value is not None:
        assert got.kappa.value == pytest.approx(k, abs=1e-9)
    else:
        assert len(set(a) | set(b)) == 1


def test_both_errored_agree_under_as_wrong_one_errored_agrees_only_with_a_wrong_answer():
    # Truth: broken. Both orders errored: both count as "not flagged", so they agree.
    rows = [(None, None, True), (None, True, True), (None, False, True), (None, None, None)]
    table = m.pair_table_from_rows(rows, errors="as_wrong")
    assert (table.both_right, table.first_right, table.second_right, table.both_wrong) == (
        0,
        0,
        1,
        2,
    )
    assert m.pair_table_from_rows(rows).n == 0


def test_an_unknown_errors_mode_is_refused():
    with pytest.raises(ValueError, match="errors: expected one of exclude, as_wrong"):
        m.answer(None, True, "as_right")


def test_kappa_interval_of_a_worked_example():
    # 40 TP, 6 FP, 9 FN, 159 TN (docs/contract.md's row): kappa 0.7971, Wald as statsmodels.
    est = m.kappa_estimate(40, 6, 9, 159)
    k, low, high = _kappa_ref([[40, 6], [9, 159]])
    assert round(est.value, 4) == round(k, 4) == 0.7971
    assert est.ci == pytest.approx((low, high))
    assert math.isclose(est.n, 214)
