"""A reviewer's marks hold at any key speed, after Back, and across two tabs (issue 20).

Keys are pressed the way a fast reviewer presses them: Playwright's `keyboard.press` in a loop and
`keyboard.type` straight after a key, with no pause. Most tests also slow the network down in
Chromium (DevTools network emulation) so every save is still on its way when the next key comes:
a slower server only widens the window these tests close.
"""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from labeling.models import Assignment, Mark
from tests.e2e.test_review_flow import db
from tests.factories import (
    PASSWORD,
    DailySampleFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)

FLAGGED = 3  # verdicts citing turns 0-2, flagged: first in page order
CLEAN = 6  # whole-call verdicts, not flagged: what `a` marks
LINES = [
    "Hi Dana, thanks for joining. I'm the screening assistant.",
    "Hi, happy to be here.",
    "Tell me about a system you designed, and how did it scale?",
    "A billing pipeline, about forty thousand invoices a day.",
]


@pytest.fixture
def busy_call():
    """call-a: three flagged verdicts at turns, six clean whole-call ones; call-b after it."""
    sample = DailySampleFactory(day=timezone.localdate())
    a = TranscriptFactory(external_id="call-a")
    for i, text in enumerate(LINES):
        TurnFactory(transcript=a, index=i, speaker="agent" if i % 2 == 0 else "user", text=text)
    flagged = [
        VerdictFactory(
            transcript=a,
            rule_version=RuleVersionFactory(rule__rule_id=f"asking.flag-{i}"),
            flagged=True,
            turn=i,
            turns=[i],
            rationale=f"Flag {i}.",
        )
        for i in range(FLAGGED)
    ]
    clean = [
        VerdictFactory(
            transcript=a,
            rule_version=RuleVersionFactory(rule__rule_id=f"closing.clean-{i}", rule__group="c"),
            flagged=False,
        )
        for i in range(CLEAN)
    ]
    SampleItemFactory(sample=sample, transcript=a)
    b = TranscriptFactory(external_id="call-b")
    TurnFactory(transcript=b, index=0, text="Hello Sam.")
    VerdictFactory(transcript=b, flagged=False)
    SampleItemFactory(sample=sample, transcript=b)
    return flagged, clean


def slow_network(page, latency_ms=150):
    """Make every request from this page take `latency_ms` longer (Chromium's own emulation)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    return cdp


def open_call(page, live_server):
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    return page


def second_tab_on_call_a(page, live_server, page_errors):
    """Open call-a in a second tab of the same browser; come back to the first."""
    page_errors.allow(r"status of 409")  # a refusal, as Chromium logs it
    other = page.context.new_page()
    other.goto(f"{live_server.url}/review/calls/call-a/")
    expect(other.get_by_text("0 of 9 verdicts marked")).to_be_visible()
    page.bring_to_front()
    return other


def mark_all_one_at_a_time(page):
    """r on each flagged verdict and then a, each waiting for its save: no race in the marking."""
    for n in range(1, FLAGGED + 1):
        page.keyboard.press("r")
        expect(page.get_by_text(f"{n} of 9 verdicts marked")).to_be_visible()
    page.keyboard.press("a")
    expect(page.get_by_text("9 of 9 verdicts marked")).to_be_visible()
    expect(page.locator("#finish")).to_be_enabled()


def marks(reviewer):
    return db(
        lambda: {
            m.verdict_id: ("right" if m.correct else "wrong", m.note)
            for m in Mark.objects.filter(reviewer=reviewer)
        }
    )


def finished(reviewer, external_id="call-a"):
    return db(
        lambda: (
            Assignment.objects.get(
                reviewer=reviewer, item__transcript__external_id=external_id
            ).finished_at
        )
    )


@pytest.mark.parametrize("latency", [0, 150])
def test_r_r_r_a_n_in_one_burst_marks_everything_and_finishes(
    login, reviewer, live_server, busy_call, page, latency
):
    flagged, clean = busy_call
    login(reviewer)
    open_call(page, live_server)
    slow_network(page, latency)
    for key in "rrran":
        page.keyboard.press(key)
    page.wait_for_url(f"{live_server.url}/review/calls/call-b/")
    expect(page.get_by_text("Finished call-a.")).to_be_visible()
    assert marks(reviewer) == {v.pk: ("right", "") for v in flagged + clean}
    assert finished(reviewer) is not None


def test_r_pressed_in_a_loop_then_u_undoes_the_last_one(
    login, reviewer, live_server, busy_call, page
):
    flagged, clean = busy_call
    order = flagged + sorted(clean, key=lambda v: v.rule_version.rule.rule_id)
    login(reviewer)
    open_call(page, live_server)
    slow_network(page)
    for _ in range(len(order)):
        page.keyboard.press("r")
    page.keyboard.press("u")
    # "Mark removed" shows only once the undo came back: every r before it was saved by then.
    expect(page.locator(f"#verdict-{order[-1].pk} .mark-state")).to_have_text("Mark removed")
    expect(page.get_by_text(f"{len(order) - 1} of {len(order)} verdicts marked")).to_be_visible()
    expect(page.locator("[data-verdict].unmarked")).to_have_count(1)
    assert marks(reviewer) == {v.pk: ("right", "") for v in order[:-1]}


@pytest.mark.parametrize("latency", [0, 150])
def test_w_e_and_a_note_typed_at_once_all_go_into_the_note(
    login, reviewer, live_server, busy_call, page, latency
):
    flagged, _clean = busy_call
    login(reviewer)
    open_call(page, live_server)
    slow_network(page, latency)
    page.keyboard.press("w")
    page.keyboard.press("e")
    page.keyboard.type("judge misread the pause")
    page.keyboard.press("Enter")
    first = page.locator(f"#verdict-{flagged[0].pk}")
    expect(first).to_have_attribute("data-note", "judge misread the pause")
    expect(first.locator(".mark-state")).to_have_text("Saved")
    assert marks(reviewer) == {flagged[0].pk: ("wrong", "judge misread the pause")}


def test_back_after_marking_shows_what_the_server_holds(
    login, reviewer, live_server, busy_call, page
):
    login(reviewer)
    open_call(page, live_server)
    mark_all_one_at_a_time(page)
    page.get_by_role("link", name="Review", exact=True).click()
    page.wait_for_url(f"{live_server.url}/review/")
    page.go_back()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    expect(page.get_by_text("9 of 9 verdicts marked")).to_be_visible()
    expect(page.locator("#finish")).to_be_enabled()


def test_back_after_finishing_shows_the_call_finished(
    login, reviewer, live_server, busy_call, page
):
    login(reviewer)
    open_call(page, live_server)
    mark_all_one_at_a_time(page)
    page.keyboard.press("n")
    page.wait_for_url(f"{live_server.url}/review/calls/call-b/")
    page.go_back()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    expect(page.get_by_text(re.compile(r"^Finished at"))).to_be_visible()
    expect(page.locator("#finish")).to_have_count(0)
    expect(page.locator("#skip")).to_have_count(0)
    expect(page.get_by_role("button", name="Next call")).to_be_visible()


def test_a_mark_from_a_tab_that_missed_the_finish_is_refused_and_said(
    login, reviewer, live_server, busy_call, page, page_errors
):
    flagged, clean = busy_call
    login(reviewer)
    open_call(page, live_server)
    other = second_tab_on_call_a(page, live_server, page_errors)
    mark_all_one_at_a_time(page)
    page.keyboard.press("n")
    page.wait_for_url(f"{live_server.url}/review/calls/call-b/")
    when = finished(reviewer)
    assert when is not None

    other.bring_to_front()
    other.locator(f"#verdict-{flagged[0].pk}").focus()
    other.keyboard.press("w")
    alert = other.locator("#review-notice")
    expect(alert).to_contain_text("call-a changed in another tab or window")
    expect(alert).to_contain_text("finished at " + timezone.localtime(when).strftime("%H:%M"))
    expect(alert).to_contain_text("not saved")
    # The tab now shows the server's state: every mark right, the call finished.
    expect(other.get_by_text("9 of 9 verdicts marked")).to_be_visible()
    expect(other.get_by_text(re.compile(r"^Finished at"))).to_be_visible()
    expect(other.locator(f"#verdict-{flagged[0].pk}")).to_have_attribute("data-mark", "right")
    assert marks(reviewer) == {v.pk: ("right", "") for v in flagged + clean}


def test_a_mark_from_a_stale_tab_on_an_open_call_is_refused_and_the_tab_catches_up(
    login, reviewer, live_server, busy_call, page, page_errors
):
    flagged, _clean = busy_call
    login(reviewer)
    open_call(page, live_server)
    other = second_tab_on_call_a(page, live_server, page_errors)
    page.keyboard.press("w")
    expect(page.locator(f"#verdict-{flagged[0].pk}")).to_have_attribute("data-mark", "wrong")

    other.bring_to_front()
    other.locator(f"#verdict-{flagged[0].pk}").focus()
    other.keyboard.press("r")
    expect(other.locator("#review-notice")).to_contain_text("not saved")
    expect(other.locator(f"#verdict-{flagged[0].pk}")).to_have_attribute("data-mark", "wrong")
    assert marks(reviewer) == {flagged[0].pk: ("wrong", "")}
    # Pressed again, knowing what the server holds, the mark saves.
    other.locator(f"#verdict-{flagged[0].pk}").focus()
    other.keyboard.press("r")
    expect(other.locator(f"#verdict-{flagged[0].pk}")).to_have_attribute("data-mark", "right")
    assert marks(reviewer) == {flagged[0].pk: ("right", "")}


def test_a_tab_that_reconnects_shows_what_changed_while_it_was_away(
    login, reviewer, live_server, busy_call, browser, page
):
    flagged, _clean = busy_call
    login(reviewer)
    open_call(page, live_server)
    # A second browser (its own session): go offline, and come back after the first one marked.
    away = browser.new_context()
    other = away.new_page()
    other.goto(f"{live_server.url}/login/")
    other.get_by_label("Username").fill(reviewer.username)
    other.get_by_label("Password").fill(PASSWORD)
    other.get_by_role("button", name="Log in").click()
    other.wait_for_url(f"{live_server.url}/")
    other.goto(f"{live_server.url}/review/calls/call-a/")
    expect(other.get_by_text("0 of 9 verdicts marked")).to_be_visible()
    away.set_offline(True)
    page.keyboard.press("w")
    expect(page.locator(f"#verdict-{flagged[0].pk}")).to_have_attribute("data-mark", "wrong")
    away.set_offline(False)
    expect(other.locator("#review-notice")).to_contain_text("changed in another tab or window")
    expect(other.locator(f"#verdict-{flagged[0].pk}")).to_have_attribute("data-mark", "wrong")
    expect(other.get_by_text("1 of 9 verdicts marked")).to_be_visible()
    away.close()
