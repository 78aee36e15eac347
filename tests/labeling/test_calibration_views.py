"""The known set's figures on the pages, in the API and in the command; permissions; exports."""

import csv
import io
import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.models import PromotionDecision
from tests import factories as f
from tests.factories import error_fields
from tests.labeling.known_calibration import build_known_set, make_marked
from tests.labeling.test_calibration import check_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def known(lead):
    return build_known_set(lead=lead)


def text_of(html: str, testid: str) -> str:
    m = re.search(
        rf'data-testid="{re.escape(testid)}"[^>]*>(.*?)</(?:td|tr|strong|a|span)>', html, re.DOTALL
    )
    assert m, testid
    return re.sub(r"<[^>]+>", " ", m.group(1)).split()


def test_api_command_and_pages_show_the_reference_figures(known, lead, client):
    a, b, j1 = known["rv_a"], known["rv_b"], known["j1"]
    exp_a = known["expected"][(a.pk, j1.pk)]
    want = exp_a.figures()

    response = f.token_client(lead).get("/api/v1/calibration/")
    assert response.status_code == 200
    rows = {(r["rule_version_id"], r["judge"]): r for r in response.json()}
    check_row(rows[(a.pk, j1.name)], exp_a)
    check_row(rows[(b.pk, j1.name)], known["expected"][(b.pk, j1.pk)])
    # docs/contract.md's keys are all there.
    assert {
        "rule",
        "version",
        "judge",
        "status",
        "marked",
        "tp",
        "fp",
        "fn",
        "tn",
        "precision",
        "precision_ci",
        "recall",
        "recall_ci",
        "weighted",
        "kappa",
        "eligible",
        "why_not",
    } <= set(rows[(a.pk, j1.name)])
    assert {"precision", "recall", "effective_n"} <= set(rows[(a.pk, j1.name)]["weighted"])

    out = io.StringIO()
    call_command("calibration", format="json", stdout=out)
    assert json.loads(out.getvalue()) == response.json()
    out = io.StringIO()
    call_command("calibration", format="table", stdout=out)
    line = next(
        l
        for l in out.getvalue().splitlines()
        if l.startswith("asking.one-question") and j1.name in l
    )
    p_ci, r_ci = want["precision_ci"], want["recall_ci"]
    assert f"{want['precision']:.2f} [{p_ci[0]:.2f}, {p_ci[1]:.2f}]" in line
    assert f"{want['recall']:.2f} [{r_ci[0]:.2f}, {r_ci[1]:.2f}]" in line
    assert "needs 158 more marks" in line

    client.force_login(lead)
    html = client.get(
        reverse("calibration-detail", args=[a.pk]) + f"?judge={j1.pk}"
    ).content.decode()
    for cell in ("tp", "fp", "fn", "tn"):
        assert text_of(html, f"cell-{cell}") == [str(want[cell])]
    assert text_of(html, "cell-waiting") == [str(want["waiting"])]
    assert text_of(html, "cell-errored") == [str(want["errored"])]
    assert text_of(html, "outside") == [str(want["outside_sample"])]
    assert text_of(html, "marked") == [str(want["marked"])]
    for name, key in (
        ("precision", "precision"),
        ("recall", "recall"),
        ("specificity", "specificity"),
    ):
        cells = re.search(rf'data-testid="fig-{name}">(.*?)</tr>', html, re.DOTALL).group(1)
        words = re.sub(r"<[^>]+>", " ", cells).split()
        assert words[1] == f"{want[key]:.4f}"
        if f"{key}_ci" in want:
            lo, hi = want[f"{key}_ci"]
            assert f"[{lo:.2f}," in words and f"{hi:.2f}]" in words
        assert words[4] == f"{want['w_' + key]:.4f}" if f"w_{key}" in want else True
    cells = re.search(r'data-testid="fig-f1">(.*?)</tr>', html, re.DOTALL).group(1)
    assert re.sub(r"<[^>]+>", " ", cells).split()[1] == f"{want['f1']:.4f}"
    assert text_of(html, "effective-n") == [f"{want['effective_n']:.1f}"]
    kappa = re.sub(
        r"<[^>]+>", " ", re.search(r'data-testid="fig-kappa">(.*?)</tr>', html, re.DOTALL).group(1)
    ).split()
    assert kappa[2] == f"{want['kappa']:.4f}"
    assert "needs 158 more marks" in html
    assert "<svg" in html and html.count('class="pt s-precision"') == 3

    html = client.get(reverse("calibration")).content.decode()
    assert "asking.one-question" in html and "boundaries.no-rubric-leak" in html
    # The figure, its interval as a bar (named for screen readers) and in text for them too.
    assert f'<span class="v">{want["precision"]:.2f}</span>' in html
    assert f'<span class="ci sr-only">[{p_ci[0]:.2f}, {p_ci[1]:.2f}]</span>' in html
    assert f"precision {want['precision']:.2f}, 95% interval {p_ci[0]:.2f} to {p_ci[1]:.2f}" in html
    assert 'class="ibar-ci low"' in html and ">TP</th>" in html and 'data-testid="fn"' in html


def test_cell_page_lists_the_verdicts_with_rationale_and_notes(known, lead, client):
    a, j1 = known["rv_a"], known["j1"]
    client.force_login(lead)
    html = client.get(
        reverse("calibration-cell", args=[a.pk, "fp"]) + f"?judge={j1.pk}"
    ).content.decode()
    assert html.count('data-testid="verdict"') == 4
    assert "Asked two questions." in html and "clarifier, not a second question" in html
    assert "settled wrong" in html  # the settled tie is one of the false positives


def test_calibration_filters_and_sorting(known, lead, client):
    client.force_login(lead)
    html = client.get(reverse("calibration") + "?group=boundaries").content.decode()
    assert "boundaries.no-rubric-leak" in html and "asking.one-question" not in html
    html = client.get(
        reverse("calibration") + "?sort=marked&dir=desc&judge=gpt-4o-mini/conduct-v3"
    ).content.decode()
    assert html.index("asking.one-question") < html.index("boundaries.no-rubric-leak")
    html = client.get(
        reverse("calibration") + "?sort=marked&dir=asc&judge=gpt-4o-mini/conduct-v3"
    ).content.decode()
    assert html.index("boundaries.no-rubric-leak") < html.index("asking.one-question")
    assert client.get(reverse("calibration") + "?status=bogus").status_code == 400


def test_calibration_pages_its_rows_in_the_chosen_order_and_figures_read_them_all(
    known, lead, client, monkeypatch
):
    from labeling.views import calibration as views

    client.force_login(lead)
    url = reverse("calibration") + "?sort=marked&dir=desc"
    whole = client.get(url).content.decode()
    order = re.findall(r'<tr data-row="([^"]+)"', whole)
    agreement = re.search(r"Agreement between reviewers.*?</p>", whole, re.DOTALL).group(0)
    assert len(order) >= 3 and "Page 1 of" not in whole
    monkeypatch.setattr(views, "CALIBRATION_ROWS_PER_PAGE", 2)
    seen = []
    for number in range(1, (len(order) + 1) // 2 + 1):
        html = client.get(f"{url}&page={number}").content.decode()
        seen += re.findall(r'<tr data-row="([^"]+)"', html)
        assert f"Page {number} of {(len(order) + 1) // 2}" in html
        # the overall agreement is over every row the filters match, whichever page is shown
        assert re.search(r"Agreement between reviewers.*?</p>", html, re.DOTALL).group(0) == (
            agreement
        )
    assert seen == order


def test_exports_markdown_and_csv(known, lead, client):
    client.force_login(lead)
    a = known["rv_a"]
    md = client.get(reverse("calibration-export", args=["md"]) + f"?rv={a.pk}").content.decode()
    lines = md.strip().splitlines()
    # header, rule, 2 judges, then the line saying how errored verdicts counted
    assert lines[0].startswith("| Rule | Version | Judge |") and len(lines) == 6
    assert (
        "`asking.one-question` | 2 | gpt-4o-mini/conduct-v3 | candidate | 42 | 2 (0) "
        "| 0.80 [0.58, 0.92]" in md
    )
    assert lines[-1] == (
        "Errored verdicts are counted apart and left out of every figure (errors=exclude)."
    )
    md = client.get(
        reverse("calibration-export", args=["md"]) + f"?rv={a.pk}&errors=as_wrong"
    ).content.decode()
    assert "(errors=as_wrong)" in md
    response = client.get(reverse("calibration-export", args=["csv"]))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    row = next(
        r
        for r in rows
        if r["rule"] == "asking.one-question" and r["judge"] == "gpt-4o-mini/conduct-v3"
    )
    assert (row["tp"], row["fp"], row["fn"], row["tn"], row["precision"]) == (
        "16",
        "4",
        "5",
        "17",
        "0.8",
    )
    assert (row["errored"], row["errored_covered"], row["errors"], row["accuracy"]) == (
        "2",
        "0",
        "exclude",
        str(round(33 / 42, 4)),
    )


@pytest.mark.parametrize(
    "name", ["calibration", "calibration-decisions", "calibration-disagreements"]
)
def test_pages_need_view_calibration(name, reviewer, engineer, lead, client):
    for user in (reviewer, engineer):
        client.force_login(user)
        assert client.get(reverse(name)).status_code == 403
    client.force_login(lead)
    assert client.get(reverse(name)).status_code == 200


def test_api_permissions(reviewer, engineer, lead):
    rv = f.RuleVersionFactory()
    for user in (reviewer, engineer):
        assert f.token_client(user).get("/api/v1/calibration/").status_code == 403
        r = f.token_client(user).post(
            f"/api/v1/rule-versions/{rv.pk}/promote/", {"reason": "x"}, format="json"
        )
        assert r.status_code == 403
        assert (
            f.token_client(user)
            .post(f"/api/v1/rule-versions/{rv.pk}/demote/", {"reason": "x"}, format="json")
            .status_code
            == 403
        )
    assert APIClient().get("/api/v1/calibration/").status_code == 401
    rv.refresh_from_db()
    assert rv.status == "candidate"


def test_api_promote_and_demote(lead, reviewer):
    judge = f.JudgeFactory()
    old = f.RuleVersionFactory(number=1, status="gated")
    rv = f.RuleVersionFactory(rule=old.rule, number=2)
    make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
    bad = f.RuleVersionFactory(number=1)
    make_marked(bad, judge, reviewer, tp=5, fp=5)
    client = f.token_client(lead)
    r = client.post(f"/api/v1/rule-versions/{bad.pk}/promote/", {"reason": "try"}, format="json")
    assert r.status_code == 409 and "needs 190 more marks" in r.json()["detail"]
    assert r.json()["code"] == "promotion_refused"
    r = client.post(f"/api/v1/rule-versions/{rv.pk}/promote/", {}, format="json")
    assert r.status_code == 400 and "reason" in error_fields(r)
    r = client.post(
        f"/api/v1/rule-versions/{rv.pk}/promote/", {"reason": "clears floors"}, format="json"
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["status"] == "gated" and body["replaced"] == 1 and body["figures"]["marked"] == 240
    old.refresh_from_db()
    assert old.status == "retired"
    r = client.post(f"/api/v1/rule-versions/{rv.pk}/demote/", {"reason": "drift"}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "candidate"
    assert list(PromotionDecision.objects.order_by("at").values_list("action", flat=True)) == [
        "promote",
        "demote",
    ]
    assert (
        client.post(
            "/api/v1/rule-versions/999999/promote/", {"reason": "x"}, format="json"
        ).status_code
        == 404
    )


def test_promote_page_posts_need_promote_permission(reviewer, engineer, lead, client):
    judge = f.JudgeFactory()
    rv = f.RuleVersionFactory()
    make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
    for user in (reviewer, engineer):
        client.force_login(user)
        assert (
            client.post(reverse("calibration-promote", args=[rv.pk]), {"reason": "x"}).status_code
            == 403
        )
    rv.refresh_from_db()
    assert rv.status == "candidate"
    client.force_login(lead)
    r = client.post(
        reverse("calibration-promote", args=[rv.pk]), {"reason": "good figures"}, follow=True
    )
    assert r.status_code == 200 and "promoted into the gate" in r.content.decode()
    rv.refresh_from_db()
    assert rv.status == "gated"
    html = client.get(reverse("calibration-decisions")).content.decode()
    assert "good figures" in html and "240 marked" in html


def test_lead_settles_a_tie_on_the_disagreements_page(known, lead, reviewer, client):
    client.force_login(reviewer)
    tie = next(
        v
        for v in known["rv_a"].verdicts.all()
        if v.marks.count() == 2
        and not hasattr(v, "settlement")
        and v.marks.filter(correct=True).count() == 1
    )
    assert (
        client.post(reverse("calibration-settle", args=[tie.pk]), {"correct": "right"}).status_code
        == 403
    )
    client.force_login(lead)
    html = client.get(reverse("calibration-disagreements")).content.decode()
    assert html.count('data-testid="disagreement"') == 3 and 'class="tag tie"' in html
    r = client.post(
        reverse("calibration-settle", args=[tie.pk]), {"correct": "right", "reason": "heard it"}
    )
    assert r.status_code == 302
    tie.refresh_from_db()
    assert tie.settlement.correct is True and tie.settlement.settled_by == lead
