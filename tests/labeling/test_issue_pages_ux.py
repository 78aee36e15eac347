"""The issue sheet's sorting and bulk actions, and what an issue row's page shows."""

import re

import pytest
from django.urls import reverse

from labeling.models import IssueRow
from tests.factories import RuleVersionFactory, VerdictFactory, logged_in
from tests.labeling.issue_helpers import call_with_turns, file_row, gated_rule

pytestmark = pytest.mark.django_db


def test_a_heading_click_replaces_the_sort_and_says_which_way(client, engineer, reviewer):
    file_row(reviewer)
    logged_in(client, engineer)
    html = client.get(reverse("issue-sheet"), {"sort": "severity", "severity": "major"}).content
    html = html.decode()
    links = re.findall(r'href="\?([^"]*sort=[^"]*)"', html)
    assert links and all(link.count("sort=") == 1 for link in links)
    assert "severity=major&amp;sort=-severity" in html  # the current column flips direction
    assert 'aria-sort="ascending"' in html and "(sorted: most severe first)" in html
    assert "sort=-number" in html  # a first click on Row: newest first


def test_a_duplicate_reads_as_one(client, engineer, reviewer):
    first = file_row(reviewer)
    dup = file_row(reviewer, first.transcript)
    logged_in(client, engineer)
    client.post(reverse("issue-row-duplicate", args=[dup.number]), {"duplicate_of": first.number})
    html = client.get(reverse("issue-sheet")).content.decode()
    assert f'duplicate of <a href="/issues/{first.number}/">row {first.number}</a>' in html


def test_bulk_assign_and_status_all_or_none(client, engineer, reviewer, lead):
    rows = [file_row(reviewer) for _ in range(3)]
    logged_in(client, engineer)
    url = reverse("issue-sheet-bulk")
    numbers = [r.number for r in rows[:2]]
    r = client.post(url, {"row": numbers, "action": "assign", "assignee": lead.username})
    assert r.status_code == 302
    assert [x.assignee for x in IssueRow.objects.order_by("number")] == [lead, lead, None]
    client.post(url, {"row": numbers, "action": "status", "status": "in_progress"})
    assert list(IssueRow.objects.order_by("number").values_list("status", flat=True)) == [
        "in_progress",
        "in_progress",
        "new",
    ]
    # One row that does not exist: nothing changes, and the message names it.
    r = client.post(url, {"row": [rows[2].number, 999], "action": "status", "status": "triaged"})
    assert IssueRow.objects.get(pk=rows[2].pk).status == "new"
    assert "rows: no issue row 999" in client.get(r.url).content.decode()
    logged_in(client, reviewer)
    assert (
        client.post(url, {"row": numbers, "action": "status", "status": "new"}).status_code == 403
    )


def test_a_row_shows_its_turn_the_verdicts_on_it_and_a_run_the_judge_step(
    client, engineer, reviewer
):
    call = call_with_turns(external_id="call-ctx")
    VerdictFactory(transcript=call, flagged=True, turn=2, turns=[2], rationale="Two questions.")
    VerdictFactory(transcript=call, flagged=False, rationale="Fine.")
    row = file_row(reviewer, call, turn=2)
    rule = gated_rule()
    fixed = RuleVersionFactory(
        rule=rule, number=2, text="Ask one question per turn; a clarifier is not a question."
    )
    IssueRow.objects.filter(pk=row.pk).update(
        rule=rule, rule_version=fixed, outcome="rule_fix", status="triaged"
    )
    logged_in(client, engineer)
    html = client.get(reverse("issue-row-detail", args=[row.number])).content.decode()
    assert html.count('<li class="row-turn') == 3 and 'class="row-turn is-named"' in html
    assert "Two questions." in html and "Fine." not in html  # only the verdicts on turn 2
    assert "<ins>turn; a clarifier is not a question.</ins>" in html  # the fix as a diff
    assert "Run the judge on call-ctx" in html and 'name="transcripts" value="call-ctx"' in html


def test_a_bad_duplicate_number_is_named_beside_its_field_and_kept(client, engineer, reviewer):
    row = file_row(reviewer)
    logged_in(client, engineer)
    r = client.post(
        reverse("issue-row-duplicate", args=[row.number]),
        {"duplicate_of": "12x", "reason": "same thing"},
    )
    html = r.content.decode()
    assert r.status_code == 400
    assert 'value="12x"' in html and 'value="same thing"' in html
    assert 'id="err-duplicate" role="alert"' in html and 'data-testid="error"' not in html


def test_the_rule_page_shows_what_each_version_changed(client, engineer):
    rule = gated_rule(text="Ask one question.")
    RuleVersionFactory(rule=rule, number=2, text="Ask one question per turn.")
    logged_in(client, engineer)
    html = client.get(reverse("rule-detail", args=[rule.rule_id])).content.decode()
    assert "What changed from version 1" in html
    assert "<del>question.</del><ins>question per turn.</ins>" in html


def test_run_the_judge_says_before_it_is_pressed_that_it_needs_a_model(
    client, engineer, reviewer, settings
):
    """No judge and no recorded answer for the fixed rule on the row's call: the button is
    disabled, says why and links to the judge connection; with a judge it is a plain button."""
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    call = call_with_turns(external_id="call-ctx")
    row = file_row(reviewer, call, turn=2)
    rule = gated_rule()
    fixed = RuleVersionFactory(rule=rule, number=2, text="Ask one question per turn.")
    IssueRow.objects.filter(pk=row.pk).update(
        rule=rule, rule_version=fixed, outcome="rule_fix", status="triaged"
    )
    logged_in(client, engineer)
    html = " ".join(
        client.get(reverse("issue-row-detail", args=[row.number])).content.decode().split()
    )
    assert re.search(r"<button[^>]*disabled[^>]*>Run the judge on call-ctx</button>", html)
    assert "no answer is recorded for" in html and 'href="/judge-connection/"' in html
    settings.JUDGE_BASE_URL = "http://127.0.0.1:9/v1"
    html = " ".join(
        client.get(reverse("issue-row-detail", args=[row.number])).content.decode().split()
    )
    assert re.search(r'<button[^>]*class="primary">Run the judge on call-ctx</button>', html)
    assert "needs-model-note" not in html and "1 judge call" in html
