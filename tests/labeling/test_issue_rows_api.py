"""/api/v1/issue-rows/: filters, keyset links, CSV, create by reviewers, triage by engineers."""

import csv
import io

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.models import IssueRow
from tests.factories import error_fields
from tests.labeling.issue_helpers import call_with_turns, file_row, gated_rule

pytestmark = pytest.mark.django_db

URL = "/api/v1/issue-rows/"


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_reviewer_files_a_row_and_gets_the_next_number(reviewer):
    t = call_with_turns()
    first = file_row(reviewer, t)
    response = api(reviewer).post(
        URL,
        {
            "transcript": t.external_id,
            "turn": 3,
            "what": "talks over at 14:20",
            "severity": "major",
            "audio_only": True,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["number"] == first.number + 1
    assert body["audio_only"] is True and body["status"] == "new"
    assert body["call_url"] == f"/calls/{t.external_id}/?turn=3#turn-3"
    assert body["history"][0]["kind"] == "filed"


def test_create_errors_name_the_field(reviewer):
    t = call_with_turns(3)
    client = api(reviewer)
    r = client.post(
        URL, {"transcript": "call-nope", "turn": 1, "what": "x", "severity": "major"}, format="json"
    )
    assert r.status_code == 400 and "transcript" in error_fields(r)
    r = client.post(
        URL,
        {"transcript": t.external_id, "turn": 9, "what": "x", "severity": "major"},
        format="json",
    )
    assert r.status_code == 400 and "turn" in error_fields(r)
    r = client.post(
        URL,
        {"transcript": t.external_id, "turn": 1, "what": "x", "severity": "awful"},
        format="json",
    )
    assert r.status_code == 400 and "severity" in error_fields(r)
    assert IssueRow.objects.count() == 0


def test_engineer_cannot_file_and_reviewer_cannot_list_or_triage(reviewer, engineer):
    t = call_with_turns()
    row = file_row(reviewer, t)
    r = api(engineer).post(
        URL,
        {"transcript": t.external_id, "turn": 1, "what": "x", "severity": "major"},
        format="json",
    )
    assert r.status_code == 403
    client = api(reviewer)
    assert client.get(URL).status_code == 403
    assert client.get(URL + "?format=csv").status_code == 403
    for path, body in [
        ("assign/", {"assignee": "priya"}),
        ("status/", {"status": "triaged"}),
        ("comment/", {"text": "x"}),
        ("write-rule/", {}),
        ("add-signal/", {"request": "x"}),
        ("fix-rule/", {"text": "x"}),
        ("wont-fix/", {"reason": "x"}),
        ("duplicate/", {"duplicate_of": 1}),
    ]:
        assert client.post(f"{URL}{row.number}/{path}", body, format="json").status_code == 403, (
            path
        )
    assert APIClient().get(URL).status_code == 401
    row.refresh_from_db()
    assert (row.status, row.outcome) == ("new", "")


def test_list_filters_and_pages_with_cursors(reviewer, engineer):
    t = call_with_turns()
    rows = [
        file_row(
            reviewer,
            t,
            what=f"talks over {i}" if i % 2 else f"silence {i}",
            severity="critical" if i % 3 == 0 else "minor",
        )
        for i in range(7)
    ]
    client = api(engineer)
    body = client.get(URL, {"q": "talks over", "limit": 2}).json()
    assert body["count"] == 3
    assert [r["number"] for r in body["results"]] == [rows[5].number, rows[3].number]
    nxt = client.get(body["next"]).json()
    assert [r["number"] for r in nxt["results"]] == [rows[1].number] and nxt["next"] is None
    back = client.get(nxt["previous"]).json()
    assert [r["number"] for r in back["results"]] == [rows[5].number, rows[3].number]
    body = client.get(URL + "?severity=critical&sort=number").json()
    assert [r["number"] for r in body["results"]] == [
        rows[0].number,
        rows[3].number,
        rows[6].number,
    ]
    bad = client.get(URL, {"status": "open"})
    assert bad.status_code == 400 and "status" in error_fields(bad)


def test_format_csv_is_the_same_file_as_the_page_export(client, reviewer, engineer):
    t = call_with_turns()
    for w in ["=1+2", "plain", "@SUM(A1)"]:
        file_row(reviewer, t, what=w)
    r = api(engineer).get(URL + "?format=csv&sort=number")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    from_api = b"".join(r.streaming_content)
    client.force_login(engineer)
    from_page = b"".join(
        client.get(reverse("issue-sheet-export") + "?sort=number").streaming_content
    )
    strip_time = lambda b: [row for row in csv.reader(io.StringIO(b.decode()[1:]))]
    assert strip_time(from_api) == strip_time(from_page)
    whats = [row[9] for row in strip_time(from_api)[1:]]
    assert whats == ["'=1+2", "plain", "'@SUM(A1)"]


def test_triage_the_three_ways_through_the_api(reviewer, engineer):
    rule = gated_rule()
    rows = [
        file_row(reviewer, what="Revealed the rubric"),
        file_row(reviewer, audio_only=True),
        file_row(reviewer),
        file_row(reviewer),
    ]
    client = api(engineer)
    r = client.post(f"{URL}{rows[0].number}/write-rule/", {}, format="json")  # everything prefilled
    assert r.status_code == 200, r.content
    assert (
        r.json()["outcome"] == "new_rule" and r.json()["rule"] == "asking.revealed-the-rubric"
    )  # the turn's phase
    assert r.json()["next_steps"][0]["note"].endswith("v1 (draft)")

    r = client.post(
        f"{URL}{rows[1].number}/add-signal/",
        {"detector": {"name": "talk_over", "max_overlap_ms": 700}, "rule_id": "signals.talk-over"},
        format="json",
    )
    assert r.status_code == 200, r.content
    assert (r.json()["rule"], r.json()["outcome"]) == ("signals.talk-over", "new_signal")
    r = client.post(
        f"{URL}{rows[3].number}/add-signal/",
        {"detector": {"name": "talk_over", "max_overlap_ms": "x"}},
        format="json",
    )
    assert r.status_code == 400 and "detector.max_overlap_ms" in error_fields(r)
    r = client.post(
        f"{URL}{rows[3].number}/add-signal/", {"rule": "signals.talk-over"}, format="json"
    )
    assert r.status_code == 200 and r.json()["rule_version"] == 1

    r = client.post(
        f"{URL}{rows[2].number}/fix-rule/",
        {"rule": rule.rule_id, "text": "One question; clarifiers ok."},
        format="json",
    )
    assert r.status_code == 200, r.content
    assert (r.json()["rule_version"], r.json()["outcome"]) == (2, "rule_fix")
    assert rule.versions.get(number=1).status == "gated"


def test_assign_status_duplicate_comment_through_the_api(reviewer, engineer, lead):
    a, b = file_row(reviewer), file_row(reviewer)
    client = api(lead)
    assert (
        client.post(f"{URL}{a.number}/assign/", {"assignee": "marco"}, format="json").json()[
            "assignee"
        ]
        == "marco"
    )
    r = client.post(f"{URL}{a.number}/assign/", {"assignee": "priya"}, format="json")
    assert r.status_code == 400 and "assignee" in error_fields(r)
    assert (
        client.post(f"{URL}{a.number}/status/", {"status": "in_progress"}, format="json").json()[
            "status"
        ]
        == "in_progress"
    )
    assert (
        client.post(
            f"{URL}{b.number}/duplicate/", {"duplicate_of": b.number}, format="json"
        ).status_code
        == 400
    )
    r = client.post(
        f"{URL}{b.number}/duplicate/", {"duplicate_of": a.number, "reason": "same"}, format="json"
    )
    assert (r.json()["duplicate_of"], r.json()["status"]) == (a.number, "resolved")
    r = client.post(f"{URL}{a.number}/comment/", {"text": "on it"}, format="json")
    kinds = [e["kind"] for e in r.json()["history"]]
    assert kinds == ["filed", "assign", "status", "comment"]
    assert client.get(f"{URL}999999/").status_code == 404
