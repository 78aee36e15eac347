"""The review page's workspace in Chromium: transcript and
verdict list side by side, panes that scroll on their own."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.factories import (
    DailySampleFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = 60
CITED = (3, 21, 48)  # turns the flagged verdicts cite
WHOLE_CALL = 24
CURRENT = re.compile(r"\bis-current\b")


@pytest.fixture
def long_call():
    call = TranscriptFactory(external_id="call-long")
    for i in range(TURNS):
        speaker = "agent" if i % 2 == 0 else "user"
        TurnFactory(
            transcript=call,
            index=i,
            speaker=speaker,
            phase="asking",
            text=f"Turn {i}: a sentence or two of what was "
            "said, long enough to wrap on a narrow pane.",
        )
    for n in CITED:
        rv = RuleVersionFactory(
            rule__rule_id=f"asking.turn-rule-{n:02d}", text="Ask one question per turn."
        )
        VerdictFactory(
            transcript=call,
            rule_version=rv,
            flagged=True,
            turn=n,
            turns=[n],
            confidence=70,
            rationale=f"Two questions in turn {n}.",
        )
    for i in range(WHOLE_CALL):
        rv = RuleVersionFactory(
            rule__rule_id=f"whole.rule-{i:02d}", text="A rule about the whole call. " * 4
        )
        VerdictFactory(
            transcript=call, rule_version=rv, flagged=False, rationale="Nothing to flag."
        )
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=call)
    return call


def box(page, selector):
    b = page.locator(selector).bounding_box()
    assert b is not None, f"{selector} is not rendered"
    return b


def current_id(page):
    return page.locator("[data-verdict].is-current").get_attribute("data-verdict")


def test_transcript_and_verdicts_side_by_side_and_j_k_scroll_their_own_pane(
    login, reviewer, live_server, long_call, page, tmp_path
):
    page.set_viewport_size({"width": 1400, "height": 900})
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-long/")
    page.screenshot(path=tmp_path / "1400.png")

    # Side by side at load: the transcript left of the whole-call list, no overlap, both inside the
    # viewport, and the first turn and the first whole-call verdict both readable without scrolling.
    transcript, verdicts = box(page, "#transcript-pane"), box(page, "#call-verdicts")
    assert transcript["x"] + transcript["width"] <= verdicts["x"], (transcript, verdicts)
    assert transcript["width"] >= 500 and verdicts["width"] >= 300
    for b in (transcript, verdicts):
        assert b["y"] < 120 and b["y"] + b["height"] <= 900, b
    expect(page.locator("#turn-0")).to_be_in_viewport()
    expect(page.locator("#call-verdicts [data-verdict]").first).to_be_in_viewport()
    # The page itself does not scroll: each pane does.
    assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight + 1")
    assert page.evaluate(
        "(() => { const p = document.getElementById('transcript-pane'); "
        "return p.scrollHeight > p.clientHeight; })()"
    )

    # j walks the verdicts citing turns in transcript order,
    # bringing each cited turn into view, then the list.
    first = page.locator("#turn-3 ~ .turn-verdicts [data-verdict]")
    assert current_id(page) == first.get_attribute("data-verdict")
    for n in CITED[1:]:
        page.keyboard.press("j")
        expect(page.locator(f"#turn-{n} ~ .turn-verdicts [data-verdict]")).to_have_class(CURRENT)
        expect(page.locator(f"#turn-{n}")).to_be_in_viewport()
        expect(page.locator("[data-verdict].is-current")).to_be_in_viewport()
    assert page.evaluate("document.getElementById('transcript-pane').scrollTop") > 0
    transcript_scroll = page.evaluate("document.getElementById('transcript-pane').scrollTop")
    page.keyboard.press("j")
    expect(page.locator("#call-verdicts [data-verdict]").first).to_have_class(CURRENT)
    for _ in range(WHOLE_CALL - 1):
        page.keyboard.press("j")
    last = page.locator("#call-verdicts [data-verdict]").last
    expect(last).to_have_class(CURRENT)
    expect(last).to_be_in_viewport()
    assert page.evaluate("document.getElementById('call-verdicts').scrollTop") > 0
    # Moving through the list left the transcript where the reviewer was reading.
    assert (
        page.evaluate("document.getElementById('transcript-pane').scrollTop") == transcript_scroll
    )
    assert page.evaluate("window.scrollY") == 0

    # Mark the current one with the keyboard: it shows its mark and "Saved" in place.
    page.keyboard.press("w")
    expect(last.locator(".mark-wrong")).to_have_attribute("aria-pressed", "true")
    expect(last.locator(".mark-state")).to_have_text("Saved")
    expect(last).to_be_in_viewport()
    expect(last).to_have_class(CURRENT)  # still the current one after the swap: the ring stays
    page.screenshot(path=tmp_path / "1400-marked.png")

    # k back into the transcript brings the last cited turn into view again.
    for _ in range(WHOLE_CALL):
        page.keyboard.press("k")
    expect(page.locator(f"#turn-{CITED[-1]} ~ .turn-verdicts [data-verdict]")).to_have_class(
        CURRENT
    )
    expect(page.locator(f"#turn-{CITED[-1]}")).to_be_in_viewport()


def test_a_narrow_screen_falls_back_to_one_column(
    login, reviewer, live_server, long_call, page, tmp_path
):
    page.set_viewport_size({"width": 760, "height": 900})
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-long/")
    head, player, transcript, verdicts, progress = (
        box(page, ".call-head"),
        box(page, ".review .player"),
        box(page, "#transcript-pane"),
        box(page, "#call-verdicts"),
        box(page, "#call-progress"),
    )
    # One column in reading order: the call, its recording, the transcript with its verdicts,
    # then the whole-call verdicts and progress; all full width, nothing side by side.
    assert head["y"] + head["height"] <= player["y"] <= transcript["y"]
    assert transcript["y"] + transcript["height"] <= verdicts["y"]
    assert verdicts["y"] + verdicts["height"] <= progress["y"] + 1
    assert (
        abs(verdicts["x"] - transcript["x"]) < 2
        and abs(verdicts["width"] - transcript["width"]) < 2
    )
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=tmp_path / "760.png")
    # The first verdict to mark is in view on opening; j brings the next one into view, by
    # scrolling the page.
    expect(page.locator("[data-verdict].is-current")).to_be_in_viewport()
    page.keyboard.press("j")
    expect(page.locator("[data-verdict].is-current")).to_be_in_viewport()
    expect(page.locator(f"#turn-{CITED[1]}")).to_be_in_viewport()
