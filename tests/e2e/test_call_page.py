"""The call page in Chromium: turns, folded tool calls, and the shared audio player."""

import re

import pytest
from playwright.sync_api import expect

from tests.factories import TranscriptFactory, TurnFactory, VerdictFactory

pytestmark = pytest.mark.django_db(transaction=True)


def wait_until(page, expression, timeout_ms=8000):
    """Poll a JS expression until it is truthy (wait_for_function
    would need 'unsafe-eval' under our CSP)."""
    for _ in range(timeout_ms // 50):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"still false after {timeout_ms} ms: {expression}")


def _call(external_id, audio_url=""):
    t = TranscriptFactory(external_id=external_id, audio_url=audio_url)
    TurnFactory(
        transcript=t,
        index=0,
        speaker="agent",
        text="Hi Dana, ready?",
        start_ms=0,
        end_ms=2000,
        phase="opening",
    )
    TurnFactory(
        transcript=t,
        index=1,
        speaker="user",
        text="Yes, ready.",
        start_ms=2500,
        end_ms=4000,
        phase="opening",
    )
    TurnFactory(
        transcript=t,
        index=2,
        speaker="agent",
        text="Let me look you up.",
        start_ms=4500,
        end_ms=6500,
        phase="past-roles",
        tool_calls=[
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_user_details", "arguments": '{"user_id": "dana_1"}'},
            }
        ],
    )
    TurnFactory(
        transcript=t,
        index=3,
        speaker="tool",
        text='{"name": "Dana"}',
        tool_call_id="call_1",
        phase="past-roles",
    )
    TurnFactory(
        transcript=t,
        index=4,
        speaker="agent",
        text="Tell me about Halcyon.",
        start_ms=7000,
        end_ms=10000,
        phase="past-roles",
    )
    VerdictFactory(
        transcript=t,
        flagged=True,
        turn=4,
        turns=[4],
        severity="major",
        rationale="Two questions at once.",
    )
    return t


def test_call_page_shows_turns_and_unfolds_tool_calls(login, reviewer, live_server):
    _call("call-text")
    page = login(reviewer)
    page.goto(f"{live_server.url}/calls/call-text/")
    expect(page.locator(".turn")).to_have_count(5)
    expect(page.locator("#turn-0")).to_contain_text("Hi Dana, ready?")
    expect(page.locator(".phase-head")).to_have_count(2)
    expect(page.locator("audio[data-player]")).to_have_count(0)
    tool_call = page.locator("#turn-2 details.tool-call")
    expect(tool_call).not_to_have_attribute("open", "")
    expect(tool_call.locator("pre")).to_be_hidden()
    tool_call.locator("summary").click()
    expect(tool_call.locator("pre")).to_be_visible()
    expect(tool_call.locator("pre")).to_contain_text('"user_id": "dana_1"')
    expect(page.locator("#turn-4 + .turn-verdicts")).to_contain_text("Two questions at once.")
    page.locator(
        "#turn-1 .bubble"
    ).click()  # no player: clicking a turn does nothing and breaks nothing
    expect(page.locator(".turn.speaking")).to_have_count(0)


def test_clicking_a_turn_seeks_the_audio_and_speed_buttons_set_the_rate(
    login, reviewer, live_server, audio_url
):
    _call("call-audio", audio_url)
    page = login(reviewer)
    page.goto(f"{live_server.url}/calls/call-audio/")
    audio = page.locator("audio#player[data-player]")
    expect(audio).to_have_count(1)
    wait_until(page, "document.getElementById('player').readyState >= 1")

    page.locator("#turn-4 .bubble").click()
    wait_until(page, "!document.getElementById('player').paused")
    assert page.evaluate("document.getElementById('player').currentTime") >= 6.9
    expect(page.locator("#turn-4")).to_have_class("turn turn-agent has-flag speaking")
    expect(page.locator("#turn-4")).to_have_attribute("aria-current", "true")

    # a button or summary inside a turn does its own job and does not seek
    page.evaluate("document.getElementById('player').pause()")
    before = page.evaluate("document.getElementById('player').currentTime")
    page.locator("#turn-2 summary").click()
    assert page.evaluate("document.getElementById('player').currentTime") == pytest.approx(
        before, abs=0.05
    )

    page.locator("[data-speed='1.5']").click()
    assert page.evaluate("document.getElementById('player').playbackRate") == 1.5
    expect(page.locator("[data-speed='1.5']")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("[data-speed='1']")).to_have_attribute("aria-pressed", "false")
    page.locator("[data-speed='2']").click()
    assert page.evaluate("document.getElementById('player').playbackRate") == 2

    # the speaking turn follows playback
    page.locator("#turn-0 .bubble").click()
    expect(page.locator("#turn-0")).to_have_class("turn turn-agent speaking")
    wait_until(page, "document.querySelector('.turn.speaking')?.id === 'turn-1'")


def test_turn_in_the_address_cues_the_audio(login, reviewer, live_server, audio_url):
    _call("call-cue", audio_url)
    page = login(reviewer)
    page.goto(f"{live_server.url}/calls/call-cue/?turn=4")
    wait_until(page, "document.getElementById('player').currentTime >= 6.9")
    expect(page.locator("#turn-4")).to_have_class("turn turn-agent has-flag cued speaking")
    assert page.evaluate("document.getElementById('player').paused")
    page.goto(f"{live_server.url}/calls/call-cue/#turn-1")
    wait_until(page, "Math.abs(document.getElementById('player').currentTime - 2.5) < 0.05")
    expect(page.locator("#turn-1")).to_contain_class("cued")


def test_calls_list_filters_in_place_and_opens_a_call(login, engineer, live_server):
    _call("call-with-audio", "https://rec.example.com/a.ogg")
    _call("call-text-only")
    page = login(engineer)
    page.goto(f"{live_server.url}/calls/")
    expect(page.locator("table.calls tbody tr")).to_have_count(2)
    page.get_by_label("Audio").select_option("no")  # htmx swaps the results without a page load
    expect(page.locator("table.calls tbody tr")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"/calls/\?.*has_audio=no"))  # the address keeps the filter
    page.get_by_role("link", name="call-text-only").click()
    expect(page.get_by_role("heading", name="call-text-only")).to_be_visible()
