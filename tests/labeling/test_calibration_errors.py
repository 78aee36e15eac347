"""Errored verdicts counted, the agreement figures with errors left out or counted wrong, and two
judges (one judge's two prompt orders, and another) compared over the same calls.

The calls (tests/labeling/errors_world.py) are built so each case happens once: an errored verdict
whose truth another judge's marks settle, one whose call's verdicts contradict each other, one on
a tied call, one alone on its call, two on the same call, and weighted calls from the sample. The
expected figures come from the spec through scikit-learn, not through Docket's SQL.
"""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from sklearn.metrics import accuracy_score, cohen_kappa_score

from core import stats as m
from labeling.selectors import calibration as cal
from labeling.selectors.judge_pairs import judge_pairs_attach
from tests import factories as f
from tests.labeling.errors_world import SPEC, A, B, C, E, build_errors_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(reviewer, make_user):
    return build_errors_world(reviewer, make_user("reviewer", username="sam"))


def _rows(judge):
    """(said, truth, weight) for each of the judge's verdicts, from the spec: the truth of an
    errored verdict is its call's, where settled; ties and conflicts settle nothing."""
    out = []
    for said, truth, p in SPEC.values():
        if judge not in said:
            continue
        t = truth if truth in (True, False) else None
        if said[judge] != E and truth == "conflict":
            t = said[judge] if judge == A else not said[judge]  # its own marks settle it
        out.append((None if said[judge] == E else said[judge], t, 1 / p if p else 1.0))
    return out


def _by_judge(rows):
    return {r.judge.name: r for r in rows if r.judge}


def test_errored_verdicts_are_counted_with_the_truth_that_covers_them(world):
    rows = _by_judge(cal.calibration_rows())
    counts = {name: (r.counts.errored, r.counts.errored_covered) for name, r in rows.items()}
    assert counts == {A: (3, 2), B: (4, 2), C: (0, 0)}
    # c4 and c6 were broken: as wrong answers A's two errored verdicts are false negatives.
    assert (rows[A].counts.errored_fn, rows[A].counts.errored_fp) == (2, 0)
    assert (rows[B].counts.errored_fn, rows[B].counts.errored_fp) == (1, 1)
    # Precision and recall, and so eligibility, are the same whichever way errors count.
    as_wrong = _by_judge(cal.calibration_rows(errors="as_wrong"))
    for name in (A, B, C):
        assert as_wrong[name].figures.precision == rows[name].figures.precision
        assert as_wrong[name].figures.recall == rows[name].figures.recall
        assert as_wrong[name].why_not == rows[name].why_not


@pytest.mark.parametrize("errors", m.ERRORS)
def test_agreement_figures_match_scikit_learn(world, errors):
    rows = _by_judge(cal.calibration_rows(errors=errors))
    for name in (A, B, C):
        y_true, y_pred, w = [], [], []
        for said, truth, weight in _rows(name):
            if truth is None or (said is None and errors == "exclude"):
                continue
            y_true.append(truth)
            y_pred.append((not truth) if said is None else said)
            w.append(weight)
        d = rows[name].as_dict()
        assert d["errors"] == errors
        assert d["counted"] == len(y_true)
        assert d["accuracy"] == round(accuracy_score(y_true, y_pred), 4)
        assert d["weighted"]["accuracy"] == round(
            accuracy_score(y_true, y_pred, sample_weight=w), 4
        )
        want = cohen_kappa_score(y_pred, y_true)
        assert d["judge_kappa"] == (None if np.isnan(want) else round(want, 4))
        want_w = cohen_kappa_score(y_pred, y_true, sample_weight=w)
        assert d["weighted"]["judge_kappa"] == (None if np.isnan(want_w) else round(want_w, 4))
        assert len(d["accuracy_ci"]) == 2 and d["accuracy_ci"][0] <= d["accuracy"]
    a = rows[A].as_dict()
    assert (a["marked"], a["errored"], a["errored_covered"], a["waiting"]) == (7, 3, 2, 1)
    assert a["accuracy"] == (round(6 / 9, 4) if errors == "as_wrong" else round(6 / 7, 4))


def test_two_judges_compared_over_the_same_calls(world):
    for errors, ab, ac in (("exclude", (3, 5), (1, 1)), ("as_wrong", (5, 8), (1, 2))):
        rows = _by_judge(cal.calibration_rows(errors=errors))
        judge_pairs_attach(list(rows.values()), errors=errors)
        others = {o.judge.name: o for o in rows[A].other_judges}
        assert list(others) == [B, C]  # the positional twin first
        assert others[B].positional and not others[C].positional
        got_ab = others[B].figures.table
        assert (got_ab.both_right + got_ab.both_wrong, got_ab.n) == ab, errors
        got_ac = others[C].figures.table
        assert (got_ac.both_right + got_ac.both_wrong, got_ac.n) == ac, errors
        # The same pair seen from B's row: the same agreement, the table transposed.
        back = {o.judge.name: o for o in rows[B].other_judges}[A]
        assert back.figures.agreement == others[B].figures.agreement
        assert back.figures.kappa.value == pytest.approx(others[B].figures.kappa.value)
        assert others[B].errored == 5  # c4, c5, c6, c7, c8 had an errored answer


def test_the_api_and_its_switch(world, lead):
    client = f.token_client(lead)
    r = client.get("/api/v1/calibration/?errors=as_wrong&rule=asking.one-question")
    assert r.status_code == 200
    a = next(o for o in r.json() if o["judge"] == A)
    assert (a["errors"], a["errored"], a["errored_covered"], a["counted"]) == ("as_wrong", 3, 2, 9)
    assert a["accuracy"] == round(6 / 9, 4)
    assert a["reviewer_kappa"] == a["kappa"]
    twin = a["other_judges"][0]
    assert (twin["judge"], twin["positional"], twin["calls"]) == (B, True, 8)
    assert twin["agreement"] == round(5 / 8, 4) and len(twin["agreement_ci"]) == 2
    default = client.get("/api/v1/calibration/").json()
    assert {o["errors"] for o in default} == {"exclude"}
    bad = client.get("/api/v1/calibration/?errors=as_right")
    assert bad.status_code == 400
    assert bad.json()["detail"] == "errors: expected one of exclude, as_wrong, got 'as_right'."


def test_the_errored_cell_lists_every_errored_verdict(world):
    verdicts = cal.calibration_cell_verdicts(
        rule_version=world["rv"], judge=world["judges"][B], cell="errored"
    )
    assert sorted(v.transcript.external_id for v in verdicts) == ["c5", "c6", "c7", "c8"]


def test_the_command_prints_the_same(world, lead):
    out = io.StringIO()
    call_command("calibration", "--format", "json", "--errors", "as_wrong", stdout=out)
    api = f.token_client(lead).get("/api/v1/calibration/?errors=as_wrong").json()
    assert json.loads(out.getvalue()) == api
    out = io.StringIO()
    call_command("calibration", "--errors", "as_wrong", stdout=out)
    table = out.getvalue()
    a_line = next(line for line in table.splitlines() if f" {A} " in f" {line} ")
    assert " 3 (2) " in a_line and "0.67 [" in a_line
    assert "counted wrong in accuracy, F1, specificity and judge κ" in table
    assert f"asking.one-question v1  {A} · {B} (positional)  8 calls  agreement 0.62" in table


def test_the_page_fetches_the_judges_compared_apart(world, lead, client):
    client.force_login(lead)
    page = client.get("/calibration/?errors=as_wrong").content.decode()
    # The table comes first; the comparison is fetched after it (or linked, without JS).
    assert 'data-testid="judge-pair"' not in page
    assert 'hx-get="/calibration/?errors=as_wrong&amp;part=pairs"' in page
    assert 'href="?errors=as_wrong&amp;pairs=1">Compare the judges</a>' in page
    part = client.get("/calibration/?errors=as_wrong&part=pairs").content.decode()
    assert "<html" not in part and part.count('data-testid="judge-pair"') == 3
    assert "positional" in part
    inline = client.get("/calibration/?errors=as_wrong&pairs=1").content.decode()
    assert "<html" in inline and inline.count('data-testid="judge-pair"') == 3
