"""How many more marks a rule version needs: the minimum, or more at the proportions its own marks
(else the workbench's estimate) show; never, when a figure's whole interval is below its floor."""

import math

import pytest

from core import stats
from evals.rules.models import Rule, RuleVersion
from labeling.selectors.calibration import CalibrationRow, Counts
from labeling.selectors.marks_needed import marks_needed

FLOORS = stats.Floors(
    min_marks=200, precision=0.8, recall=0.7, safety_precision=0.85, safety_recall=0.9
)


def row(tp=0, fp=0, fn=0, tn=0, estimate=None, safety=False):
    rv = RuleVersion(rule=Rule(rule_id="asking.x", safety=safety), number=2, estimate=estimate)
    return CalibrationRow(rv, None, Counts(tp=tp, fp=fp, fn=fn, tn=tn), FLOORS)


def test_no_marks_and_no_estimate_needs_the_minimum():
    need = marks_needed(row())
    assert (need.more, need.total, need.source) == (200, 200, "")


def test_its_own_marks_ask_for_more_than_the_minimum_when_precision_is_near_its_floor():
    need = marks_needed(row(tp=17, fp=3, fn=2, tn=78))  # precision 0.85, 20% of marks flagged
    n = stats.marks_to_clear(0.85, 0.8)
    assert need.total == math.ceil(n * 100 / 20) > 200 and need.more == need.total - 100
    assert need.source == "its marks"


def test_a_figure_surely_below_its_floor_is_never_reached():
    need = marks_needed(row(tp=10, fp=30, fn=1, tn=59))
    assert need.more is None and "precision [0.14, 0.40]" in need.reason
    assert "below its floor 0.80" in need.reason


def test_a_version_without_marks_uses_the_workbench_estimate():
    weights = {"tp": 30.0, "fp": 2.0, "fn": 5.0, "tn": 263.0}
    estimate = {"from_version": 1, "carried": True, "figures": {"weights": weights}}
    need = marks_needed(row(estimate=estimate))
    recall_n = stats.marks_to_clear(30 / 35, 0.7)
    precision_n = stats.marks_to_clear(30 / 32, 0.8)
    want = max(200, math.ceil(recall_n * 300 / 35), math.ceil(precision_n * 300 / 32))
    assert need.total == want and need.source == "estimated from version 1's marks"
    # An estimate whose truth was not carried says nothing.
    not_carried = {"from_version": 1, "carried": False}
    assert marks_needed(row(estimate=not_carried)).source == ""


@pytest.mark.django_db
def test_the_calibration_page_shows_the_estimate_and_the_marks_needed(client, lead):
    from tests.factories import RuleVersionFactory, logged_in

    weights = {"tp": 30.0, "fp": 2.0, "fn": 5.0, "tn": 263.0}
    rv = RuleVersionFactory(
        number=2,
        estimate={
            "from_version": 1,
            "carried": True,
            "calls": 40,
            "draft": 1,
            "figures": {
                "weights": weights,
                "precision": [0.94, 0.8, 0.98],
                "recall": [0.86, 0.7, 0.94],
            },
        },
    )
    logged_in(client, lead)
    page = client.get("/calibration/").content.decode()
    assert "estimated from v1&#x27;s marks: precision 0.94 · recall 0.86" in page
    detail = client.get(f"/calibration/rule-versions/{rv.pk}/").content.decode()
    assert "Estimated from version 1&#x27;s marks on 40 calls" in detail
    assert "Needs about <strong>" in detail
