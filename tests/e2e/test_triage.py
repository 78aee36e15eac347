"""The issue sheet in Chromium: filter, open a row's
call at its turn, take each of the three ways."""

import re

import pytest
from playwright.sync_api import expect

from evals.rules.models import Rule, RuleVersion
from labeling.models import IssueRow
from tests.factories import JudgeFactory, TranscriptFactory, TurnFactory, VerdictFactory
from tests.labeling.issue_helpers import file_row, gated_rule

pytestmark = pytest.mark.django_db(transaction=True)


def _call(external_id, audio_url=""):
    t = TranscriptFactory(external_id=external_id, audio_url=audio_url)
    lines = [
        ("agent", "Hi Dana, ready?", "opening"),
        ("user", "Yes.", "opening"),
        ("agent", "Tell me about your last role.", "asking"),
        ("user", "I led a team.", "asking"),
        ("agent", "What did you build, and why, and how?", "asking"),
    ]
    for i, (speaker, text, phase) in enumerate(lines):
        TurnFactory(
            transcript=t,
            index=i,
            speaker=speaker,
            text=text,
            start_ms=i * 2000 + 500,
            end_ms=i * 2000 + 2000,
            phase=phase,
        )
    return t


def test_engineer_filters_the_sheet_and_opens_a_call_at_its_turn(
    login, engineer, reviewer, live_server, audio_url
):
    t = _call("call-audio", audio_url)
    other = _call("call-text")
    target = file_row(
        reviewer,
        t,
        turn=4,
        what="Talks over the candidate at 0:08",
        severity="critical",
        audio_only=True,
    )
    for i in range(3):
        file_row(reviewer, other, turn=i, what=f"Minor thing {i}", severity="minor")
    page = login(engineer)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Issues").click()
    expect(page.get_by_role("heading", name="Issue sheet")).to_be_visible()
    expect(page.locator("#sheet-table tbody tr")).to_have_count(4)

    # Each step waits for exactly the rows it expects (one list assertion), never for a count
    # alone: two filters in a row can both give one row, and the table swaps between them.
    rows = page.locator("#sheet-table tbody tr")
    page.get_by_label("critical").check()  # htmx swaps the table and pushes the URL
    expect(rows).to_have_text([re.compile("Talks over the candidate")])
    expect(page.get_by_test_id("row-count")).to_have_text("1 row")
    expect(page).to_have_url(re.compile(r"severity=critical"))
    page.get_by_label("critical").uncheck()
    page.get_by_label("Search what happened").fill("minor thing 2")
    expect(rows).to_have_text([re.compile("Minor thing 2")])
    page.get_by_label("Search what happened").fill("")
    page.get_by_label("Heard").select_option("true")
    expect(rows).to_have_text([re.compile("Talks over the candidate")])
    expect(page.get_by_test_id("export-csv")).to_have_attribute(
        "href", re.compile(r"audio_only=true")
    )

    page.locator(f"#row-{target.number} a.call-link").click()
    expect(page).to_have_url(f"{live_server.url}/calls/call-audio/?turn=4#turn-4")
    expect(page.locator("#turn-4")).to_contain_class("cued")
    page.wait_for_function("Math.abs(document.getElementById('player').currentTime - 8.5) < 0.05")


def test_engineer_takes_each_of_the_three_ways(login, engineer, reviewer, live_server):
    t = _call("call-ways")
    rule = gated_rule("asking.one-question", "Ask one question per turn.")
    VerdictFactory(
        transcript=t,
        rule_version=rule.versions.get(),
        judge=JudgeFactory(),
        flagged=True,
        turn=2,
        turns=[2],
        severity="major",
        rationale="Two questions.",
    )
    no_rule = file_row(
        reviewer, t, turn=4, what="Asked three questions in one breath", severity="major"
    )
    audio = file_row(
        reviewer, t, turn=3, what="Long silence before the agent answered", audio_only=True
    )
    judge_wrong = file_row(reviewer, t, turn=2, what="Judge flags a clarifier as a second question")
    page = login(engineer)

    # 1. Write a rule: the form is prefilled from the row.
    page.goto(f"{live_server.url}/issues/{no_rule.number}/")
    page.get_by_role("link", name="Write a rule").click()
    expect(page.get_by_label("Group")).to_have_value("asking")
    expect(page.get_by_label("Rule id")).to_have_value("asking.asked-three-questions-in-one-breath")
    expect(page.get_by_label("Text")).to_have_value("Asked three questions in one breath")
    expect(page.get_by_label("Severity")).to_have_value("major")
    page.get_by_label("Text").fill("Ask at most one question per turn.")
    page.get_by_role("button", name="Create draft rule").click()
    expect(page).to_have_url(f"{live_server.url}/issues/{no_rule.number}/")
    expect(page.get_by_test_id("row-outcome")).to_have_text("write a rule")
    expect(page.locator("[data-step=written]")).to_contain_text(
        "asking.asked-three-questions-in-one-breath v1 (draft)"
    )
    expect(page.locator("[data-step=judged]")).to_contain_text("no verdicts yet")
    expect(page.get_by_test_id("history")).to_contain_text("wrote a rule")
    assert (
        RuleVersion.objects.get(rule__rule_id="asking.asked-three-questions-in-one-breath").status
        == "draft"
    )

    # 2. Add a signal: pick a detector, its parameters appear, set one.
    page.goto(f"{live_server.url}/issues/{audio.number}/")
    page.get_by_role("link", name="Add a signal").click()
    params = page.locator("[data-detector=silence_before_agent]")
    expect(params).to_be_hidden()
    page.locator("input[name=detector][value=silence_before_agent]").check()
    expect(params).to_be_visible()
    params.get_by_label(re.compile("max_ms")).fill("2500")
    page.get_by_label("Rule id").fill("signals.answer-quickly")
    page.get_by_label("What it checks").fill("The agent answers within 2.5 seconds.")
    page.get_by_role("button", name="Create detector rule").click()
    expect(page).to_have_url(f"{live_server.url}/issues/{audio.number}/")
    expect(page.get_by_test_id("row-outcome")).to_have_text("add a signal")
    assert Rule.objects.get(rule_id="signals.answer-quickly").detector == {
        "name": "silence_before_agent",
        "max_ms": 2500,
    }

    # 3. Fix the rule: the rule judged at that turn is picked, its text is in the editor.
    page.goto(f"{live_server.url}/issues/{judge_wrong.number}/")
    page.get_by_role("link", name="Fix the rule").click()
    expect(page.get_by_label("Rule")).to_have_value("asking.one-question")
    expect(page.get_by_test_id("current-text")).to_have_text("Ask one question per turn.")
    editor = page.get_by_label(re.compile(r"New text \(version 2\)"))
    expect(editor).to_have_value("Ask one question per turn.")
    editor.fill(
        "Ask one question per turn; a clarifier of the same question is not a second question."
    )
    page.get_by_role("button", name="Save version 2").click()
    expect(page).to_have_url(f"{live_server.url}/issues/{judge_wrong.number}/")
    expect(page.get_by_test_id("row-outcome")).to_have_text("fix the rule")
    expect(page.locator("[data-step=promoted]")).to_contain_text("v1 stays in the gate until then")
    assert list(rule.versions.order_by("number").values_list("number", "status")) == [
        (1, "gated"),
        (2, "candidate"),
    ]

    # Close one as a duplicate, with the trail kept.
    page.get_by_label("Duplicate of row").fill(str(no_rule.number))
    page.get_by_role("button", name="Close as duplicate").click()
    expect(page.get_by_test_id("row-status")).to_have_text("resolved")
    expect(page.get_by_test_id("history")).to_contain_text("closed it as a duplicate")
    assert IssueRow.objects.get(pk=judge_wrong.pk).duplicate_of_id == no_rule.pk


def test_reviewer_cannot_triage(login, reviewer, live_server, page_errors):
    page_errors.allow(r"/issues/: Failed to load resource: .* status of 403")
    row = file_row(reviewer, _call("call-r"))
    page = login(reviewer)
    expect(
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Issues")
    ).to_have_count(0)
    assert page.goto(f"{live_server.url}/issues/").status == 403
    page.goto(f"{live_server.url}/")
    token = page.evaluate("JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken']")
    headers = {"X-CSRFToken": token, "Referer": f"{live_server.url}/"}
    r = page.request.post(
        f"{live_server.url}/issues/{row.number}/add-signal/",
        headers=headers,
        form={"mode": "request", "request": "x"},
    )
    assert r.status == 403
    r = page.request.post(
        f"{live_server.url}/api/v1/issue-rows/{row.number}/status/",
        headers=headers,
        data={"status": "triaged"},
    )
    assert r.status == 403 and "triage" in r.json()["detail"]
    row.refresh_from_db()
    assert (row.status, row.outcome, row.signal_request) == ("new", "", "")
