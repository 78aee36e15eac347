"""Outcomes in Chromium, at a desk and on a phone: a reviewer rates a call's outcome with the
keyboard on the review page; a lead reads the outcome trend and the "bad outcome, nothing flagged"
list, and files an issue row on such a call."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from labeling.models import IssueRow, OutcomeRating
from tests.e2e.test_days import SIZES, check_page, go
from tests.e2e.test_review_flow import db
from tests.factories import (
    DailySampleFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)
from tests.labeling.test_outcomes import rated  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sampled_call():
    call = TranscriptFactory(external_id="call-out")
    for i in range(4):
        TurnFactory(
            transcript=call,
            index=i,
            speaker="agent" if i % 2 == 0 else "user",
            text=f"Turn {i}: a sentence of the interview.",
        )
    VerdictFactory(transcript=call, flagged=True, turn=2, turns=[2], rationale="Two questions.")
    VerdictFactory(transcript=call, flagged=False, rationale="Nothing to flag.")
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=call)
    return call


def rating_of(call):
    return db(lambda: OutcomeRating.objects.filter(transcript=call).first())


@SIZES
def test_a_reviewer_rates_the_outcome_with_the_keyboard(
    login, reviewer, live_server, sampled_call, page, size
):
    page.set_viewport_size(size)
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-out/")
    panel = page.locator("#outcome-panel")
    expect(panel).to_contain_text("Was this call good for the candidate and the company?")
    page.keyboard.press("r")  # the flagged verdict
    expect(page.get_by_text("1 of 2 verdicts marked")).to_be_visible()
    page.keyboard.press("a")  # the rest
    expect(page.get_by_text("2 of 2 verdicts marked")).to_be_visible()
    # Digits belong to the outcome panel: pressed elsewhere they rate nothing.
    page.keyboard.press("4")
    page.wait_for_timeout(300)
    assert rating_of(sampled_call) is None
    page.keyboard.press("o")
    expect(panel).to_be_focused()
    # A bad rating asks for a reason: the reason field takes the focus; Enter without one is
    # refused beside the field, and what was typed stays.
    page.keyboard.press("2")
    reason = page.locator("#outcome-overall-reason")
    expect(reason).to_be_focused()
    expect(page.locator("#review-flash")).to_contain_text("say why")
    page.locator("#outcome-overall-factor").fill("Cut her off")
    reason.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#outcome-overall-reason-error")).to_contain_text("needs a reason")
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#outcome-overall-factor")).to_have_value("Cut her off")
    expect(panel.locator("input[name=rating][value='2']")).to_be_checked()
    assert rating_of(sampled_call) is None
    expect(reason).to_be_focused()
    page.keyboard.type("She was cut off twice mid-answer.")
    page.keyboard.press("Enter")
    expect(panel.locator(".outcome-state")).to_have_text("Saved: 2 of 5")
    saved = rating_of(sampled_call)
    assert (saved.rating, saved.reason, saved.key_factor) == (
        2,
        "She was cut off twice mid-answer.",
        "Cut her off",
    )
    assert saved.assignment is not None
    # Still in the panel after the save: another digit replaces the rating, at once.
    page.keyboard.press("4")
    expect(panel.locator(".outcome-state")).to_have_text("Saved: 4 of 5")
    assert db(lambda: OutcomeRating.objects.count()) == 1 and rating_of(sampled_call).rating == 4
    check_page(page)
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    help_panel = page.locator("#keys-help")
    expect(help_panel).to_contain_text("rate the outcome 1 (bad) to 5 (good)")
    expect(help_panel).to_contain_text("go to the outcome question")
    check_page(page)


@SIZES
def test_a_lead_reads_the_trend_and_files_a_row_on_a_bad_call_nothing_flagged(
    login,
    lead,
    live_server,
    rated,  # noqa: F811
    page,
    size,
):
    page.set_viewport_size(size)
    login(lead)
    expect(page.locator("[data-testid=outcome-trend] circle").first).to_be_attached()
    check_page(page)
    go(page, "Layers")  # the layers' own pages hang off the Layers map
    page.get_by_role("main").get_by_role("link", name="Outcomes and what predicts them").click()
    expect(page.get_by_role("heading", name="Outcomes", exact=True)).to_be_visible()
    bad = page.locator("[data-testid=bad-unflagged]")
    expect(bad).to_contain_text("bad-2")
    expect(bad).to_contain_text("no issue row yet")
    headings = page.locator("h2").all_inner_texts()
    assert headings[0].startswith("Bad outcome, nothing flagged"), headings
    trend = page.locator("[data-testid=outcome-trend]")
    expect(trend.locator("circle")).to_have_count(3)
    expect(trend.locator("line.whisker").first).to_be_attached()
    expect(page.locator("[data-testid=outcome-predictors]")).to_contain_text("worth a look")
    check_page(page)
    bad.get_by_role("link", name="File an issue row").first.click()
    page.wait_for_url(f"{live_server.url}/outcomes/calls/bad-2/issue/")
    expect(page.get_by_text("talked over her")).to_be_visible()
    check_page(page)
    page.locator("#issue-what").fill("Talks over the candidate; no rule covers it.")
    page.locator("#issue-what").press("Enter")
    expect(page.get_by_text("Filed row 1", exact=True)).to_be_visible()
    row = db(lambda: IssueRow.objects.get())
    assert row.transcript.external_id == "bad-2" and row.reporter_id == lead.pk
    go(page, "Layers")
    page.get_by_role("main").get_by_role("link", name="Outcomes and what predicts them").click()
    expect(page.locator("[data-testid=bad-unflagged]")).to_contain_text("1 issue row")
    check_page(page)
