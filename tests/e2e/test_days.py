"""A reviewer's, an engineer's and a lead's day in Chromium, at a desk (1400x900) and on a phone
(390x844): every page they open has no serious axe issue and never scrolls sideways."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from labeling.models import IssueRow, Mark
from tests.e2e.axe import assert_no_serious_axe
from tests.e2e.ranged_server import serve_directory, write_tone
from tests.e2e.test_review_flow import db
from tests.factories import (
    DailySampleFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)
from tests.labeling.issue_helpers import call_with_turns, file_row
from tests.labeling.known_calibration import build_known_set

pytestmark = pytest.mark.django_db(transaction=True)

DESK, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}
SIZES = pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
TOUCH_PX = 44


def check_page(page):
    """What every page must do: no sideways scroll, no serious accessibility issue."""
    page.wait_for_load_state()
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), page.url
    assert_no_serious_axe(page)


def go(page, link: str):
    """Follow a main navigation link, through the Menu button on a phone."""
    toggle = page.locator("[data-nav-toggle]")
    if toggle.is_visible():
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
    page.get_by_role("navigation", name="Main").get_by_role("link", name=link, exact=True).click()


@pytest.fixture
def sampled_call(tmp_path):
    """A sampled call with a recording: two flagged verdicts at turns, six clean whole-call ones."""
    write_tone(tmp_path / "day.wav", seconds=30)
    with serve_directory(str(tmp_path)) as base:
        call = TranscriptFactory(external_id="call-day", audio_url=f"{base}/day.wav")
        for i in range(8):
            TurnFactory(
                transcript=call,
                index=i,
                speaker="agent" if i % 2 == 0 else "user",
                text=f"Turn {i}: a sentence of the interview, long enough to read.",
                start_ms=i * 3500,
                end_ms=i * 3500 + 3000,
            )
        for turn in (2, 6):
            VerdictFactory(
                transcript=call, flagged=True, turn=turn, turns=[turn], rationale="Two questions."
            )
        for _ in range(6):
            VerdictFactory(transcript=call, flagged=False, rationale="Nothing to flag.")
        SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=call)
        yield call


@SIZES
def test_a_reviewers_day(login, reviewer, live_server, sampled_call, page, size):
    page.set_viewport_size(size)
    login(reviewer)
    check_page(page)
    go(page, "Review")
    page.get_by_label("Queue").select_option("flagged")
    check_page(page)
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-day/")
    current = page.locator("[data-verdict].is-current")
    expect(current).to_be_in_viewport()  # the first verdict to mark, in view on opening
    check_page(page)
    if size is DESK:
        # Keys: r on both flagged verdicts, a for the rest, u undoes the rest, a again, n.
        first = page.locator("[data-verdict].is-flagged").first
        page.keyboard.press("r")
        expect(first.locator(".mark-state")).to_have_text("Saved")
        page.keyboard.press("a")
        expect(page.locator("#review-flash")).to_contain_text("flagged verdict first")
        expect(current).to_be_in_viewport()
        page.keyboard.press("r")
        expect(page.locator("#mark-rest")).to_be_enabled()
        page.keyboard.press("a")
        expect(page.get_by_text("8 of 8 verdicts marked")).to_be_visible()
        page.keyboard.press("u")
        expect(page.get_by_text("2 of 8 verdicts marked")).to_be_visible()
        assert db(lambda: Mark.objects.count()) == 2
        page.keyboard.press("a")
        expect(page.get_by_text("8 of 8 verdicts marked")).to_be_visible()
        # An issue row on a range of the recording, picked on the timeline.
        box = page.locator(".timeline svg").bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + box["width"] * 0.40, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.55, y, steps=4)
        page.mouse.up()
        expect(page.locator("#issue-what")).to_be_focused()
        page.locator("#issue-what").fill("Talks over the user")
        page.locator("#issue-what").press("Enter")
        expect(page.get_by_text("Filed row 1", exact=True)).to_be_visible()
        row = db(lambda: IssueRow.objects.get())
        assert 10_000 < row.start_ms < row.end_ms < 18_000 and row.turn is not None
        check_page(page)
        page.keyboard.press("Escape")  # out of the issue form, as a reviewer would
        page.keyboard.press("n")
    else:
        # Taps: the Judge right and wrong buttons are real touch targets; Finish stays on screen.
        b = current.get_by_role("button", name="Judge right").bounding_box()
        assert b["height"] >= TOUCH_PX and b["width"] >= TOUCH_PX, b
        expect(page.locator("#call-progress")).to_be_in_viewport()
        flagged = page.locator("[data-verdict].is-flagged")
        ids = [flagged.nth(i).get_attribute("data-verdict") for i in range(flagged.count())]
        for vid in ids:  # by id: a locator on "unmarked" would match the one still saving
            page.locator(f"#verdict-{vid}").get_by_role("button", name="Judge right").click()
            expect(page.locator(f"#verdict-{vid} .mark-state")).to_have_text("Saved")
        expect(page.locator("#mark-rest")).to_be_enabled()
        page.locator("#mark-rest").click()
        expect(page.get_by_text("8 of 8 verdicts marked")).to_be_visible()
        check_page(page)
        page.get_by_role("button", name="Finish call").click()
    page.wait_for_url(f"{live_server.url}/review/")
    expect(page.get_by_text("Finished call-day.")).to_be_visible()
    assert db(lambda: Mark.objects.filter(correct=True).count()) == 8


@SIZES
def test_an_engineers_day(login, engineer, reviewer, live_server, page, size):
    call = call_with_turns(external_id="call-eng")
    VerdictFactory(transcript=call, flagged=True, turn=2, turns=[2], rationale="Two questions.")
    rows = [file_row(reviewer, call, turn=t, severity=s) for t, s in ((2, "major"), (3, "minor"))]
    page.set_viewport_size(size)
    login(engineer)
    go(page, "Issues")
    expect(page.get_by_role("heading", name="Issue sheet")).to_be_visible()
    check_page(page)
    page.locator("th a.sort", has_text="Severity").click()
    expect(page).to_have_url(re.compile(r"sort=severity"))
    assert page.url.count("sort=") == 1
    for r in rows:
        page.get_by_label(f"Tick row {r.number}").check()
    page.locator("#sheet-bulk select[name=assignee]").select_option(engineer.username)
    page.locator("#sheet-bulk").get_by_role("button", name="Assign").click()
    expect(page.get_by_text("2 rows assigned to marco.")).to_be_visible()
    check_page(page)

    page.goto(f"{live_server.url}/issues/{rows[0].number}/")
    expect(page.locator(".row-turn.is-named")).to_contain_text("Agent #2")
    expect(page.get_by_test_id("row-verdicts")).to_contain_text("Two questions.")
    check_page(page)
    page.get_by_role("link", name="Fix the rule").click()
    editor = page.get_by_label(re.compile(r"New text \(version 2\)"))
    expect(editor).to_be_visible()  # the new page, not the one being left
    check_page(page)
    editor.fill("Ask one question per turn; a clarifier is not a second question.")
    page.get_by_role("button", name="Save version 2").click()
    expect(page.get_by_test_id("fix-diff").locator("ins")).to_contain_text("a clarifier")
    expect(page.locator("[data-step=judged] .run-judge button")).to_be_visible()
    check_page(page)
    fixed = db(lambda: IssueRow.objects.select_related("rule_version").get(pk=rows[0].pk))
    assert (fixed.outcome, fixed.rule_version.number) == ("rule_fix", 2)

    go(page, "Judge runs")
    page.get_by_role("button", name="Estimate cost").click()
    expect(page.locator("#run-estimate")).to_be_visible()
    expect(page.get_by_test_id("no-judge")).to_contain_text("No judge is configured")
    check_page(page)


@SIZES
def test_a_leads_day(login, lead, live_server, page, size, page_errors):
    known = build_known_set(lead=lead)
    RuleVersionFactory(rule=known["rv_a"].rule, number=3, text="Ask one question, at most.")
    page.set_viewport_size(size)
    login(lead)
    go(page, "Calibration")
    expect(page.get_by_role("heading", name="Calibration")).to_be_visible()
    table = page.locator("#calibration-table")
    expect(table.locator("thead")).to_contain_text("TP")
    expect(table.locator("svg.ibar").first).to_be_attached()
    check_page(page)
    table.get_by_role(
        "link", name=re.compile(r"sort.*Precision|Precision", re.IGNORECASE)
    ).first.click()
    expect(page).to_have_url(re.compile(r"sort=precision"))
    check_page(page)

    page.goto(f"{live_server.url}/calibration/rule-versions/{known['rv_a'].pk}/")
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    expect(crumbs).to_contain_text("asking.one-question v2")
    expect(page.locator("svg.trend-chart line.whisker").first).to_be_attached()
    check_page(page)
    page.goto(f"{live_server.url}/rules/asking.one-question/")
    expect(page.get_by_text("What changed from version 2")).to_be_visible()
    check_page(page)
    for path in ("/calibration/disagreements/", "/calibration/decisions/", "/gates/"):
        page.goto(f"{live_server.url}{path}")
        check_page(page)
    page_errors.allow(r"/calls/no-such-call/: Failed to load resource: .* status of 404")
    response = page.goto(f"{live_server.url}/calls/no-such-call/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Nothing here")).to_be_visible()
    check_page(page)
