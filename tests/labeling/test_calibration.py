"""The calibration selector on a known set of verdicts
and marks, checked against the reference libraries."""

import re

import pytest
from statsmodels.stats.proportion import proportion_confint

from core import stats as metrics
from labeling.models import TallyCell, VerdictTally
from labeling.selectors import calibration as cal
from tests.labeling.known_calibration import build_known_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def known(db):
    return build_known_set()


def by_key(rows):
    return {(r["rule_version_id"], r["judge"]): r for r in rows}


def check_row(row: dict, exp):
    want = exp.figures()
    for key in (
        "marked",
        "tp",
        "fp",
        "fn",
        "tn",
        "precision",
        "precision_ci",
        "recall",
        "recall_ci",
        "f1",
        "specificity",
        "specificity_ci",
        "kappa",
        "agreement",
        "pairs",
        "waiting",
        "errored",
        "outside_sample",
    ):
        assert row[key] == want[key], key
    wt = row["weighted"]
    assert wt["precision"] == want["w_precision"]
    assert wt["recall"] == want["w_recall"]
    assert wt["f1"] == want["w_f1"]
    assert wt["effective_n"] == want["effective_n"]
    # The weighted intervals are Wilson intervals on the Kish effective sample size.
    lo, hi = proportion_confint(
        want["w_precision"] * want["w_precision_n"], want["w_precision_n"], method="wilson"
    )
    assert wt["precision_ci"] == pytest.approx([lo, hi], abs=2e-4)
    lo, hi = proportion_confint(
        want["w_recall"] * want["w_recall_n"], want["w_recall_n"], method="wilson"
    )
    assert wt["recall_ci"] == pytest.approx([lo, hi], abs=2e-4)


def test_known_set_figures_match_sklearn_and_statsmodels(known):
    rows = by_key(r.as_dict() for r in cal.calibration_rows())
    j1, j2 = known["j1"].name, known["j2"].name
    a, b = known["rv_a"].pk, known["rv_b"].pk
    check_row(rows[(a, j1)], known["expected"][(a, known["j1"].pk)])
    check_row(rows[(b, j1)], known["expected"][(b, known["j1"].pk)])
    row = rows[(a, j1)]
    # Spelled out, so a wrong reference would show too.
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (16, 4, 5, 17)
    assert (row["waiting"], row["errored"], row["outside_sample"], row["pairs"]) == (1, 2, 3, 6)
    assert (
        row["rule"] == "asking.one-question"
        and row["version"] == 2
        and row["status"] == "candidate"
    )
    assert row["eligible"] is False
    assert row["why_not"][0] == "needs 158 more marks"
    # A judge filter keeps only that judge's row.
    only_j2 = cal.calibration_rows(judge=j2)
    assert [(r.rule_version.pk, r.judge.name) for r in only_j2] == [(a, j2)]
    assert (
        only_j2[0].counts.tp == 3
        and only_j2[0].counts.fn == 2
        and only_j2[0].figures.precision.value == 1.0
    )


def test_undefined_figures_are_null_not_zero(known):
    row = by_key(r.as_dict() for r in cal.calibration_rows())[(known["rv_a"].pk, known["j2"].name)]
    assert (
        row["specificity"] is None and row["specificity_ci"] is None
    )  # no negatives marked right or FP
    assert row["kappa"] is None and row["agreement"] is None


def test_safety_rule_uses_stricter_floors(known, settings):
    settings.DOCKET_MIN_MARKS = 10
    row = by_key(r.as_dict() for r in cal.calibration_rows())[(known["rv_b"].pk, known["j1"].name)]
    # 6 of 6 flagged right: lower bound of [0.61, 1.0] is under both floors.
    assert row["why_not"] == [
        "precision lower bound 0.61 < 0.85 (safety rule)",
        "recall lower bound 0.61 < 0.90 (safety rule)",
    ]


def test_filters_by_group_and_status(known):
    assert {r.rule_version.rule.group for r in cal.calibration_rows(group="boundaries")} == {
        "boundaries"
    }
    assert cal.calibration_rows(status="gated") == []


def test_unmarked_versions_appear_once_without_a_judge(known):
    from tests.factories import RuleVersionFactory

    rv = RuleVersionFactory(rule=known["rv_a"].rule, number=3)
    rows = [r for r in cal.calibration_rows() if r.rule_version == rv]
    assert len(rows) == 1 and rows[0].judge is None
    assert rows[0].as_dict()["why_not"][0] == "needs 200 more marks"
    assert rows[0].as_dict()["precision"] is None


def test_counting_is_one_query(known):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        rows = cal.calibration_rows()
    assert len(rows) == 3
    sql = [
        q["sql"]
        for q in ctx.captured_queries
        if not q["sql"].upper().startswith(("SAVEPOINT", "RELEASE", "SET"))
    ]
    # All counting in two aggregates: the marked verdicts over the tally's cells, the errored
    # ones (their calls' truth from the per-verdict tally); the raw marks are not read.
    assert sum(TallyCell._meta.db_table in q for q in sql) == 1
    assert sum(VerdictTally._meta.db_table in q for q in sql) == 1
    assert sum("e.error <> ''" in q for q in sql) == 1
    assert not any(re.search(r"\blabeling_mark\b", q) for q in sql)
    assert len(sql) == 5  # + rule versions, judges, unmarked versions


def test_python_twin_matches_the_aggregate(known):
    rv, j1 = known["rv_a"], known["j1"]
    counts = cal.Counts()
    for v in cal.verdict_outcomes(rule_version=rv, judge=j1):
        counts.add_verdict(v)
    row = cal.calibration_row(rule_version=rv, judge=j1)
    assert cal.Figures(counts).as_dict() == row.figures.as_dict()


def test_trend_by_week(known):
    rv, j1 = known["rv_a"], known["j1"]
    exp = known["expected"][(rv.pk, j1.pk)]
    trend = cal.calibration_trend(rule_version=rv, judge=j1)
    assert [w.isoformat() for w, _ in trend] == ["2026-11-02", "2026-11-09", "2026-11-16"]
    for (week, figs), idx in zip(trend, (0, 1, 2)):
        want = exp.weeks[idx].counts()
        got = figs.counts
        assert (got.tp, got.fp, got.fn, got.tn) == (want["tp"], want["fp"], want["fn"], want["tn"])
    assert trend[0][1].precision.value == pytest.approx(12 / 15)


def test_cell_verdicts(known):
    rv, j1 = known["rv_a"], known["j1"]
    fps = list(cal.calibration_cell_verdicts(rule_version=rv, judge=j1, cell="fp"))
    assert len(fps) == 4 and all(v.flagged for v in fps)
    assert len(cal.calibration_cell_verdicts(rule_version=rv, judge=j1, cell="waiting")) == 1
    assert len(cal.calibration_cell_verdicts(rule_version=rv, judge=j1, cell="errored")) == 2
    with pytest.raises(ValueError):
        cal.calibration_cell_verdicts(rule_version=rv, judge=j1, cell="bogus")


def test_disagreements_list_ties_first(known):
    rows = list(cal.disagreements())
    # split verdicts: [R,W,R], [R,W] tie, [W,R] tie settled
    assert len(rows) == 3
    assert rows[0].tied and not rows[0].settled
    assert [v.tied for v in cal.disagreements(only_ties=True)] == [True, True]
    assert not rows[1].tied and not rows[1].settled and rows[1].n_wrong == 1  # the 2-1 split
    assert rows[2].tied and rows[2].settled


def test_disagreements_are_every_split_verdict_counted_from_its_marks(known):
    """The selector against a straightforward recompute: every non-errored verdict whose marks
    split, with its counts, for all rule versions and for one."""
    from labeling.models import Mark, Settlement

    def recompute(rule_version=None):
        by = {}
        for m in Mark.objects.select_related("verdict"):
            if m.verdict.error or (rule_version and m.verdict.rule_version_id != rule_version.pk):
                continue
            by.setdefault(m.verdict_id, []).append(m.correct)
        settled = set(Settlement.objects.values_list("verdict_id", flat=True))
        return {
            vid: (len(cs), sum(cs), len(cs) == 2 * sum(cs), vid in settled)
            for vid, cs in by.items()
            if len(cs) >= 2 and 0 < sum(cs) < len(cs)
        }

    for rv in (None, known["rv_a"]):
        got = {
            v.pk: (v.n_marks, v.n_right, v.tied, v.settled)
            for v in cal.disagreements(rule_version=rv)
        }
        assert got == recompute(rv) and got


def test_overall_kappa(known):
    rows = cal.calibration_rows()
    overall = cal.calibration_overall(rows)
    assert overall["pairs"] == 6
    assert overall["kappa"] == pytest.approx(
        metrics.cohen_kappa(rows[0].counts.pairs + rows[1].counts.pairs)
    )


def test_a_cells_page_lists_exactly_the_verdicts_of_that_cell(known):
    rv, j1 = known["rv_a"], known["j1"]
    seen = 0
    for judge in (None, j1):
        outcomes = cal.verdict_outcomes(rule_version=rv, judge=judge)
        for cell in ("tp", "fp", "fn", "tn", "waiting"):
            listed = cal.calibration_cell_verdicts(rule_version=rv, judge=judge, cell=cell)
            want = {v.verdict_id for v in outcomes if v.cell == cell}
            assert set(listed.values_list("pk", flat=True)) == want, (judge, cell)
            seen += len(want)
    assert seen > 0
