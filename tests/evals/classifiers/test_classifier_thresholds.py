"""Thresholds from marks, the pure maths: against scikit-learn's PR curve and statsmodels'
Wilson interval, the definition counted threshold by threshold, and on a worked example."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_curve
from statsmodels.stats.proportion import proportion_confint

from evals.classifiers.thresholds import Item, histogram, pr_curve, threshold_choose

items_st = st.lists(
    st.builds(
        Item,
        st.booleans(),
        st.one_of(st.none(), st.integers(0, 100)),
        st.one_of(st.none(), st.booleans()),
    ),
    max_size=60,
)


def test_a_worked_example():
    items = [
        Item(True, 95, True),  # TP at any threshold up to 95
        Item(True, 90, True),
        Item(True, 70, False),  # FP up to 70
        Item(True, 40, False),
        Item(False, 80, False),  # missed: a positive no threshold catches
        Item(False, 99, True),  # a true negative
        Item(True, 60, None),  # not marked: counts in the distribution only
    ]
    curve = {p.threshold: p for p in pr_curve(items)}
    assert sorted(curve) == [0, 40, 70, 90, 95]
    assert (curve[0].tp, curve[0].fp, curve[0].fn) == (2, 2, 1)
    assert curve[70].precision == 2 / 3 and curve[90].precision == 1.0
    assert curve[90].recall == pytest.approx(2 / 3) and curve[95].recall == pytest.approx(1 / 3)
    choice = threshold_choose(list(curve.values()), 0.9)
    assert choice.threshold == 90 and choice.point.precision_ci[0] < 0.9
    assert choice.conservative is None  # two marks cannot put a lower bound above 0.9
    h = histogram(items)
    assert h["flagged"][9] == 2 and h["flagged"][4] == 1 and h["unflagged"][8] == 1


@settings(max_examples=60)
@given(items_st)
def test_the_curve_matches_scikit_learn_and_statsmodels(items):
    marked = [i for i in items if i.positive is not None]
    points = {p.threshold: p for p in pr_curve(items)}
    positives = sum(i.positive for i in marked)
    if not marked or not positives:
        assert all(p.recall is None for p in points.values())
        return
    y_true = [int(i.positive) for i in marked]
    # Unflagged verdicts are never predicted positive: a score below every threshold.
    y_score = [(i.confidence or 0) if i.flagged else -1 for i in marked]
    precision, recall, thresholds = precision_recall_curve(y_true, y_score)
    for p, r, t in zip(precision, recall, thresholds, strict=False):
        if t < 0:
            continue
        ours = points[int(t)]
        assert ours.precision == pytest.approx(p) and ours.recall == pytest.approx(r)
        n = ours.tp + ours.fp
        low, high = proportion_confint(ours.tp, n, method="wilson")
        assert ours.precision_ci == pytest.approx((low, high))


@given(items_st, st.floats(0.05, 1.0))
def test_the_chosen_threshold_is_the_lowest_reaching_the_target(items, target):
    curve = pr_curve(items)
    choice = threshold_choose(curve, target)
    reaching = [p.threshold for p in curve if p.precision is not None and p.precision >= target]
    assert choice.threshold == (min(reaching) if reaching else None)
    if choice.conservative is not None:
        assert choice.conservative >= (choice.threshold or 0)


@given(
    items_st.map(
        lambda items: [Item(i.flagged, i.confidence, i.right, n) for n, i in enumerate(items, 1)]
    )
)
def test_the_curve_counts_each_threshold_as_its_definition_says(items):
    """TP(t), FP(t) and FN(t) summed afresh at each threshold, the thresholds being 0 and each
    confidence of a marked flagged verdict."""
    marked = [i for i in items if i.positive is not None]
    positives = sum(i.n for i in marked if i.positive)
    flagged = [i for i in marked if i.flagged]
    curve = pr_curve(items)
    assert [p.threshold for p in curve] == sorted({0, *((i.confidence or 0) for i in flagged)})
    for p in curve:
        above = [i for i in flagged if (i.confidence or 0) >= p.threshold]
        tp = sum(i.n for i in above if i.positive)
        assert (p.tp, p.fp, p.fn) == (tp, sum(i.n for i in above) - tp, positives - tp)


@given(items_st)
def test_the_figures_read_no_more_of_a_confidence_than_the_spans_keep(items):
    """A verdict that is not both flagged and marked keeps only its histogram bin
    (Item.counted, as the classifier spans count it): the histogram and curve stay the same."""
    counted = [i.counted() for i in items]
    assert histogram(counted) == histogram(items) and pr_curve(counted) == pr_curve(items)
    kept = {i.confidence for i in counted if not (i.flagged and i.right is not None)}
    assert kept <= {None, *range(0, 100, 10)}
