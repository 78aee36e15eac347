"""Leads promote a calibrated rule version in Chromium; reviewers and engineers are refused by the
server; the table's errored verdicts, agreement figures, errors switch and judges compared read
right at desk and phone widths, with no serious axe issue and no sideways scroll."""

import pytest
from playwright.sync_api import expect

from evals.rules.models import RuleVersion
from labeling.models import PromotionDecision
from labeling.services.marks_import import marks_import
from tests import factories as f
from tests.e2e.axe import assert_no_serious_axe
from tests.labeling.errors_world import A, B, C, build_errors_world
from tests.labeling.known_calibration import build_known_set, make_marked

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def calibrated(reviewer):
    judge = f.JudgeFactory()
    rule = f.RuleFactory(rule_id="asking.one-question", group="asking")
    old = f.RuleVersionFactory(rule=rule, number=1, status="gated")
    rv = f.RuleVersionFactory(
        rule=rule, number=2, text="Ask one question per turn; a clarifier is not a question."
    )
    make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
    weak = f.RuleVersionFactory(
        rule=f.RuleFactory(rule_id="asking.no-hints", group="asking"), number=4
    )
    make_marked(weak, judge, reviewer, tp=20, fp=10, fn=15, tn=5)
    return {"rv": rv, "old": old, "weak": weak, "judge": judge}


def test_lead_promotes_an_eligible_version_and_sees_it_in_the_audit_log(
    login, lead, calibrated, live_server, tmp_path
):
    page = login(lead)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Calibration").click()
    expect(page.get_by_role("heading", name="Calibration")).to_be_visible()
    weak_row = page.locator("tr", has_text="asking.no-hints")
    expect(weak_row).to_contain_text("needs 150 more marks")
    page.screenshot(path=tmp_path / "calibration.png", full_page=True)

    page.get_by_role("link", name="asking.one-question v2").click()
    expect(page.get_by_test_id("eligibility")).to_have_text("Eligible for the gate.")
    expect(page.get_by_test_id("cell-tp")).to_have_text("90")
    expect(page.get_by_test_id("cell-fp")).to_have_text("5")
    page.get_by_label("Why promote").fill("240 marks; precision and recall clear the floors")
    page.screenshot(path=tmp_path / "detail.png", full_page=True)
    page.get_by_role("button", name="Promote into the gate").click()
    expect(
        page.get_by_text("asking.one-question v2 promoted into the gate, replacing v1.")
    ).to_be_visible()
    expect(page.get_by_test_id("status")).to_have_text("gated")
    expect(page.get_by_role("button", name="Demote out of the gate")).to_be_visible()

    page.get_by_role("link", name="All decisions").click()
    expect(page.get_by_role("heading", name="Decision log")).to_be_visible()
    row = page.get_by_test_id("decision").first
    expect(row).to_contain_text("promote")
    expect(row).to_contain_text("replaced v1")
    expect(row).to_contain_text("lena")
    expect(row).to_contain_text("240 marks; precision and recall clear the floors")
    expect(row).to_contain_text("240 marked · P 0.95 [0.88, 0.98] · R 0.90 [0.83, 0.94]")
    page.screenshot(path=tmp_path / "decisions.png", full_page=True)

    calibrated["old"].refresh_from_db()
    assert calibrated["old"].status == "retired"
    assert RuleVersion.objects.get(pk=calibrated["rv"].pk).status == "gated"


@pytest.mark.parametrize("role", ["reviewer", "engineer"])
def test_reviewers_and_engineers_get_a_server_side_403(
    role, login, make_user, calibrated, live_server, page_errors
):
    page_errors.allow(r"/calibration/.*: Failed to load resource: .* status of 403")
    user = make_user(role, username=f"no-{role}")
    page = login(user)
    expect(
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Calibration")
    ).to_have_count(0)
    response = page.goto(f"{live_server.url}/calibration/rule-versions/{calibrated['rv'].pk}/")
    assert response.status == 403
    # POST directly, with a valid CSRF token, so the refusal is the permission check's.
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    for action in ("promote", "demote"):
        r = page.request.post(
            f"{live_server.url}/calibration/rule-versions/{calibrated['rv'].pk}/{action}/",
            form={"reason": "sneaking in"},
            headers={"X-CSRFToken": token, "Referer": f"{live_server.url}/"},
            max_redirects=0,
        )
        assert r.status == 403
        assert "CSRF verification failed" not in r.text()
        assert "Not for your role" in r.text()
    assert RuleVersion.objects.get(pk=calibrated["rv"].pk).status == "candidate"
    assert not PromotionDecision.objects.exists()


def test_lead_filters_the_table_in_place(login, lead, live_server):
    build_known_set(lead=lead)
    page = login(lead)
    page.goto(f"{live_server.url}/calibration/")
    expect(page.locator("#cal-results tbody tr")).to_have_count(3)
    page.get_by_label("Group").select_option("boundaries")
    expect(page.locator("#cal-results tbody tr")).to_have_count(1)
    expect(page.locator("#cal-results")).to_contain_text("boundaries.no-rubric-leak")
    expect(page).to_have_url(
        f"{live_server.url}/calibration/?group=boundaries&status=&judge=&errors=exclude"
    )
    with page.expect_response(lambda r: "/calibration/export.md" in r.url) as info:
        page.get_by_role("button", name="Markdown").click()
    text = info.value.text()
    assert "boundaries.no-rubric-leak" in text and "asking.one-question" not in text


def test_lead_settles_a_tie_and_reads_the_trend(login, lead, live_server, tmp_path):
    known = build_known_set(lead=lead)
    page = login(lead)
    page.goto(f"{live_server.url}/calibration/disagreements/?ties=1")
    tie = (
        page.get_by_test_id("disagreement")
        .filter(has_text="tie")
        .filter(has_not_text="settled")
        .first
    )
    row_id = tie.get_attribute("id")
    tie.get_by_placeholder("why (optional)").fill("heard a clarifier")
    page.screenshot(path=tmp_path / "disagreements.png", full_page=True)
    tie.get_by_role("button", name="Judge right").click()
    # htmx swaps the row in place: the tie is now settled, the page did not reload.
    row = page.locator(f"#{row_id}")
    expect(row).to_contain_text("settled right by lena: heard a clarifier")
    expect(row).to_contain_text("tie, settled")
    expect(page.get_by_test_id("disagreement")).to_have_count(2)
    page.goto(
        f"{live_server.url}/calibration/rule-versions/{known['rv_a'].pk}/?judge={known['j1'].pk}"
    )
    expect(page.get_by_test_id("cell-waiting")).to_have_text("0")
    expect(page.locator("svg.trend-chart circle.s-precision")).to_have_count(3)
    page.screenshot(path=tmp_path / "trend.png", full_page=True)
    page.get_by_test_id("cell-fp").click()
    expect(page.get_by_test_id("verdict")).to_have_count(4)
    expect(page.get_by_text("clarifier, not a second question").first).to_be_visible()
    page.screenshot(path=tmp_path / "cell.png", full_page=True)


def test_errored_verdicts_agreement_and_judges_compared(
    login, lead, reviewer, make_user, live_server, tmp_path
):
    world = build_errors_world(reviewer, make_user("reviewer", username="sam"))
    # A second opinion on c6 arrives from a spreadsheet: the figures stay, the mark says where
    # it came from.
    marks_import(
        lines=[
            "transcript,rule,rule_version,judge,reviewer,correct\n",
            f"c6,asking.one-question,1,{C},noor,right\n",
        ],
        source="labels.csv",
        fmt="csv",
        create_reviewers=True,
    )
    page = login(lead)
    page.goto(f"{live_server.url}/calibration/")
    rows = page.locator("#calibration-table tbody tr")
    row = rows.filter(has=page.get_by_text(A, exact=True))
    expect(row.get_by_test_id("errored")).to_have_text("3 (2)")
    expect(row.get_by_test_id("accuracy").locator(".v")).to_have_text("0.86")  # 6 of 7
    expect(page.get_by_role("columnheader", name="Judge κ")).to_be_visible()
    expect(page.get_by_role("columnheader", name="Reviewer κ")).to_be_visible()
    expect(page.get_by_test_id("errors-note")).to_contain_text("left out of every figure")
    pairs = page.get_by_test_id("judge-pair")
    expect(pairs).to_have_count(3)
    expect(pairs.filter(has_text="positional")).to_contain_text("0.60")  # 3 of 5 calls
    assert_no_serious_axe(page)
    page.screenshot(path=tmp_path / "calibration-desk.png", full_page=True)

    # The switch swaps the table in place and says so in the address.
    page.get_by_label("Errored verdicts").select_option("as_wrong")
    expect(page).to_have_url(
        f"{live_server.url}/calibration/?group=&status=&judge=&errors=as_wrong"
    )
    expect(row.get_by_test_id("accuracy").locator(".v")).to_have_text("0.67")  # 6 of 9
    expect(page.get_by_test_id("errors-note")).to_contain_text("count as wrong answers")
    expect(pairs.filter(has_text="positional")).to_contain_text("0.62")  # 5 of 8 calls
    # The export carries the switch (the form's hidden field, as a click on Markdown sends it).
    errors_field = page.locator("#cal-export input[name=errors]")
    expect(errors_field).to_have_value("as_wrong")
    text = page.request.get(f"{live_server.url}/calibration/export.md?errors=as_wrong").text()
    assert "(errors=as_wrong)" in text and f"{A} · {B} (positional)" in text

    page.set_viewport_size(PHONE)
    assert_no_serious_axe(page)
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=tmp_path / "calibration-phone.png", full_page=True)

    # The rule version's page: the errored verdicts covered, accuracy and judge κ, other judges.
    page.set_viewport_size({"width": 1280, "height": 900})
    row.get_by_role("link", name="asking.one-question v1").click()
    expect(page.get_by_test_id("errored-covered")).to_have_text("2")
    expect(page.get_by_test_id("fig-accuracy")).to_contain_text("0.6667")
    expect(page.get_by_test_id("fig-judge-kappa")).to_be_visible()
    expect(page.get_by_test_id("other-judge").first).to_contain_text("positional")
    assert_no_serious_axe(page)
    page.screenshot(path=tmp_path / "detail-desk.png", full_page=True)
    page.set_viewport_size(PHONE)
    assert_no_serious_axe(page)
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=tmp_path / "detail-phone.png", full_page=True)
    page.get_by_test_id("cell-errored").click()
    expect(page.get_by_test_id("verdict")).to_have_count(3)  # c4, c6, c9

    c_judge = world["judges"][C]
    page.goto(
        f"{live_server.url}/calibration/rule-versions/{world['rv'].pk}/verdicts/tp/?judge={c_judge.pk}"
    )
    expect(page.get_by_test_id("mark-source")).to_have_text("imported from labels.csv (CSV)")
