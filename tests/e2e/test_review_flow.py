"""A reviewer works through a whole call in Chromium:
claim, play, mark by key and mouse, issue row, finish."""

import time

import pytest
from django.db import OperationalError
from django.utils import timezone
from playwright.sync_api import expect

from labeling.models import IssueRow, Mark
from tests.e2e.ranged_server import serve_directory, write_tone
from tests.factories import (
    DailySampleFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audio_base(tmp_path):
    write_tone(tmp_path / "call-a.wav", seconds=40)
    with serve_directory(str(tmp_path)) as url:
        yield url


LINES = [
    (
        "agent",
        "opening",
        "Hi Dana, thanks for joining. I'm the screening assistant for the backend role.",
    ),
    ("user", "opening", "Hi, happy to be here."),
    (
        "agent",
        "asking",
        "Tell me about a system you designed. What did it do and how did it scale?",
    ),
    (
        "user",
        "asking",
        "I built a billing pipeline that handled about forty thousand invoices a day.",
    ),
    ("tool", "asking", '{"note_saved": true}'),
    ("agent", "asking", "Thanks. What was the hardest failure you debugged there?"),
    ("user", "asking", "A race between two workers that double-charged a few customers."),
    ("agent", "closing", "That's all from me. Thanks, Dana, you'll hear from us this week."),
]


@pytest.fixture
def calls(audio_base):
    sample = DailySampleFactory(day=timezone.localdate())
    a = TranscriptFactory(external_id="call-a", audio_url=f"{audio_base}/call-a.wav")
    for i, (speaker, phase, text) in enumerate(LINES):
        TurnFactory(
            transcript=a,
            index=i,
            speaker=speaker,
            phase=phase,
            text=text,
            start_ms=i * 4000,
            end_ms=i * 4000 + 3800,
        )
    two_q = RuleVersionFactory(
        rule__rule_id="asking.one-question", text="Ask one question per turn."
    )
    greet = RuleVersionFactory(
        rule__rule_id="opening.greet-by-name",
        rule__group="opening",
        text="Greet the candidate once, by name.",
    )
    leak = RuleVersionFactory(
        rule__rule_id="boundaries.no-rubric-leak",
        rule__group="boundaries",
        text="Never reveal the scoring rubric.",
    )
    close = RuleVersionFactory(
        rule__rule_id="closing.next-steps", rule__group="closing", text="Say what happens next."
    )
    v = {
        "two_q": VerdictFactory(
            transcript=a,
            rule_version=two_q,
            flagged=True,
            turn=2,
            turns=[2, 5],
            severity="minor",
            confidence=72,
            rationale="Asked two questions in one turn.",
        ),
        "greet": VerdictFactory(
            transcript=a,
            rule_version=greet,
            flagged=True,
            turn=0,
            turns=[0],
            severity="minor",
            confidence=60,
            rationale="Greeted without the name.",
        ),
        "leak": VerdictFactory(
            transcript=a, rule_version=leak, flagged=False, rationale="No rubric mentioned."
        ),
        "close": VerdictFactory(
            transcript=a, rule_version=close, flagged=False, rationale="Said when they hear."
        ),
    }
    SampleItemFactory(sample=sample, transcript=a)
    b = TranscriptFactory(external_id="call-b")
    TurnFactory(transcript=b, index=0, text="Hello Sam.")
    VerdictFactory(transcript=b, rule_version=greet, flagged=False)
    SampleItemFactory(sample=sample, transcript=b)
    return a, b, v


def db(fn, tries=40):
    """Run a read while the live server may be writing
    (SQLite's shared in-memory test database locks tables)."""
    for attempt in range(tries):
        try:
            return fn()
        except OperationalError:
            if attempt == tries - 1:
                raise
            time.sleep(0.05)


def mark_of(reviewer, verdict):
    m = db(lambda: Mark.objects.filter(reviewer=reviewer, verdict=verdict).first())
    return None if m is None else ("right" if m.correct else "wrong")


def test_a_reviewer_works_through_a_whole_call(login, reviewer, live_server, calls, page, tmp_path):
    a, _b, v = calls
    page.set_viewport_size({"width": 1440, "height": 900})
    login(reviewer)
    page.get_by_role("link", name="Review", exact=True).click()
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    expect(page.get_by_role("heading", name="call-a")).to_be_visible()
    expect(page.get_by_text("0 of 4 verdicts marked")).to_be_visible()
    expect(page.locator("#finish")).to_be_disabled()
    page.screenshot(path=tmp_path / "1-open.png", full_page=True)

    # Play: clicking a turn seeks there and plays; the spoken turn is highlighted; speeds work.
    page.locator("#turn-3 .text").click()
    page.wait_for_function(
        "() => { const a = document.getElementById('player'); "
        "return !a.paused && a.currentTime >= 12; }"
    )
    expect(page.locator("#turn-3")).to_have_attribute("aria-current", "true")
    page.get_by_role("button", name="1.5×").click()
    assert page.evaluate("document.getElementById('player').playbackRate") == 1.5

    # Keyboard: the first verdict is current; space pauses (on the speed button it would press
    # the button instead, as on any button); r marks it right and moves on; w marks the next wrong.
    first = page.locator("[data-verdict]").nth(0)
    first_id = int(first.get_attribute("data-verdict"))
    page.locator(f"#verdict-{first_id}").focus()
    page.keyboard.press(" ")
    page.wait_for_function("() => document.getElementById('player').paused")
    assert not page.evaluate("document.getElementById('player').ended")
    page.keyboard.press("r")
    expect(page.locator(f"#verdict-{first_id} .mark-right")).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.locator(f"#verdict-{first_id} .mark-state")).to_have_text("Saved")
    second_id = int(page.locator("[data-verdict]").nth(1).get_attribute("data-verdict"))
    page.keyboard.press("w")
    expect(page.locator(f"#verdict-{second_id} .mark-wrong")).to_have_attribute(
        "aria-pressed", "true"
    )
    note = page.locator(f"#verdict-{second_id} input[name=note]")
    note.fill("Asked one question, with a clarifier")
    note.press("Enter")
    expect(page.locator(f"#verdict-{second_id}")).to_have_attribute(
        "data-note", "Asked one question, with a clarifier"
    )
    expect(page.locator(f"#verdict-{second_id} .mark-state")).to_have_text("Saved")
    ids = {x.pk: x for x in v.values()}
    assert mark_of(reviewer, ids[first_id]) == "right"
    assert (
        db(lambda: Mark.objects.get(verdict_id=second_id).note)
        == "Asked one question, with a clarifier"
    )

    # j/k move between verdicts.
    page.locator(f"#verdict-{second_id}").click(position={"x": 5, "y": 5})
    page.keyboard.press("j")
    third_id = int(page.locator("[data-verdict].is-current").get_attribute("data-verdict"))
    assert third_id not in (first_id, second_id)
    page.keyboard.press("k")
    assert int(page.locator("[data-verdict].is-current").get_attribute("data-verdict")) == second_id

    # Mouse: mark the third right, then change the first to wrong; u undoes that change.
    page.locator(f"#verdict-{third_id}").get_by_role("button", name="Judge right").click()
    expect(page.locator(f"#verdict-{third_id} .mark-right")).to_have_attribute(
        "aria-pressed", "true"
    )
    page.locator(f"#verdict-{first_id}").get_by_role("button", name="Judge wrong").click()
    expect(page.locator(f"#verdict-{first_id} .mark-wrong")).to_have_attribute(
        "aria-pressed", "true"
    )
    assert mark_of(reviewer, ids[first_id]) == "wrong"
    page.keyboard.press("u")
    expect(page.locator(f"#verdict-{first_id} .mark-right")).to_have_attribute(
        "aria-pressed", "true"
    )
    assert mark_of(reviewer, ids[first_id]) == "right"
    expect(page.get_by_text("3 of 4 verdicts marked")).to_be_visible()

    # n before every verdict is marked: refused, and the unmarked one becomes current.
    page.keyboard.press("n")
    expect(page.locator("#review-flash")).to_contain_text("1 left")
    last_id = int(page.locator("[data-verdict].is-current").get_attribute("data-verdict"))
    assert mark_of(reviewer, ids[last_id]) is None

    # File an issue row on a turn with i.
    page.locator("#turn-6").click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.locator(f"#verdict-{last_id}").focus()
    page.keyboard.press("i")
    expect(page.locator("#issue-what")).to_be_focused()
    page.locator("#issue-turn").fill("6")
    page.locator("#issue-what").fill("Talks over the candidate at 0:25")
    page.get_by_label("critical").check()
    page.get_by_label("Heard in the recording, not in the transcript").check()
    page.locator("#issue-what").press("Enter")
    expect(page.get_by_text("Filed row 1", exact=True)).to_be_visible()
    row = db(lambda: IssueRow.objects.select_related("reporter").get())
    assert (row.number, row.turn, row.severity, row.audio_only, row.reporter) == (
        1,
        6,
        "critical",
        True,
        reviewer,
    )
    page.screenshot(path=tmp_path / "2-marked.png", full_page=False)

    # Mark the last verdict with the keyboard, then finish with n: the next call opens.
    page.locator(f"#verdict-{last_id}").focus()
    page.keyboard.press("r")
    expect(page.get_by_text("4 of 4 verdicts marked")).to_be_visible()
    expect(page.locator("#finish")).to_be_enabled()
    page.keyboard.press("n")
    page.wait_for_url(f"{live_server.url}/review/calls/call-b/")
    expect(page.get_by_role("heading", name="call-b")).to_be_visible()
    expect(page.get_by_text("No recording for this call")).to_be_visible()
    assert (
        db(lambda: a.sample_items.get().assignments.get(reviewer=reviewer).finished_at) is not None
    )

    # Back to a call finished today: change a mark there.
    page.get_by_role("link", name="Review", exact=True).click()
    page.get_by_role("link", name="call-a").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    page.locator(f"#verdict-{third_id}").get_by_role("button", name="Judge wrong").click()
    expect(page.locator(f"#verdict-{third_id} .mark-wrong")).to_have_attribute(
        "aria-pressed", "true"
    )
    assert mark_of(reviewer, ids[third_id]) == "wrong"


def test_keys_help_and_text_only_call(login, reviewer, live_server, calls, page):
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    page.keyboard.press("?")
    expect(page.locator("#keys-help")).to_have_attribute("open", "")
    expect(page.get_by_text("undo the last mark")).to_be_visible()
    page.get_by_role("button", name="Skip").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-b/")
    expect(page.get_by_text("Skipped call-a")).to_be_visible()


def test_a_mark_made_after_logging_out_is_not_lost_silently(
    login, reviewer, live_server, calls, page
):
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    page.context.clear_cookies(name="sessionid")
    first = page.locator("[data-verdict]").nth(0)
    first.get_by_role("button", name="Judge right").click()
    expect(first.locator(".mark-state")).to_have_text("Not saved: you are logged out.")
    expect(page.locator("#review-flash")).to_contain_text("logged out")
    expect(page.get_by_role("heading", name="call-a")).to_be_visible()
    assert db(lambda: Mark.objects.count()) == 0


def _open_first_call(login, reviewer, live_server, page):
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-a/")
    loads = []
    page.on("load", lambda: loads.append(page.url))
    return page.locator("[data-verdict]").nth(0).get_attribute("data-verdict"), loads


def test_a_note_sent_the_moment_the_wrong_mark_lands_saves_in_place(
    login, reviewer, live_server, calls, page
):
    # The note form arrives with the Judge wrong mark's answer. Sent in the same task it appears in,
    # it must still save in place (no plain form post: a page load, no "Saved").
    vid, loads = _open_first_call(login, reviewer, live_server, page)
    page.evaluate(
        """(id) => new MutationObserver(function (_, observer) {
            const form = document.querySelector('#verdict-' + id + ' .note-form');
            if (!form) return;
            observer.disconnect();
            form.querySelector('input[name=note]').value = 'fast note';
            form.requestSubmit();
        }).observe(document.body, { childList: true, subtree: true })""",
        vid,
    )
    page.locator(f"#verdict-{vid}").get_by_role("button", name="Judge wrong").click()
    expect(page.locator(f"#verdict-{vid}")).to_have_attribute("data-note", "fast note")
    expect(page.locator(f"#verdict-{vid} .mark-state")).to_have_text("Saved")
    assert loads == []
    assert db(lambda: Mark.objects.get(verdict_id=vid).note) == "fast note"


def test_a_second_press_while_the_first_is_saving_is_sent_after_it(
    login, reviewer, live_server, calls, page
):
    vid, loads = _open_first_call(login, reviewer, live_server, page)
    page.evaluate(
        """(id) => { const v = document.getElementById('verdict-' + id);
            v.querySelector('.mark-right').click(); v.querySelector('.mark-wrong').click(); }""",
        vid,
    )
    expect(page.locator(f"#verdict-{vid} .mark-wrong")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f"#verdict-{vid} .mark-state")).to_have_text("Saved")
    assert loads == []
    assert db(lambda: Mark.objects.get(verdict_id=vid).correct) is False
