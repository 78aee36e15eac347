"""The outcome API and command: the same report, ratings and questions as the pages."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from labeling.models import OutcomeQuestion, OutcomeRating
from tests.factories import TranscriptFactory, error_fields, token_client
from tests.labeling.test_outcomes import rated  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def test_the_report_is_the_same_in_the_api_and_the_command(lead, rated):  # noqa: F811
    api = token_client(lead).get("/api/v1/outcomes/?agent=phone-screen").json()
    out = StringIO()
    call_command("outcomes", "--agent", "phone-screen", "--format", "json", stdout=out)
    assert json.loads(out.getvalue()) == api
    assert api["question"] == "overall" and api["overall"]["calls"] == 6
    assert [c["transcript"] for c in api["bad_unflagged"]] == ["bad-2"]
    table = StringIO()
    call_command("outcomes", "--agent", "phone-screen", stdout=table)
    text = table.getvalue()
    assert "Bad outcome, nothing flagged (1):" in text and "bad-2" in text
    assert "timing.no-long-silence" in text and "worth a look: never fired" in text
    with pytest.raises(CommandError, match="no agent named 'nobody'"):
        call_command("outcomes", "--agent", "nobody")


def test_a_reviewer_rates_through_the_api_idempotently(reviewer, lead):
    call = TranscriptFactory(external_id="call-000900")
    api = token_client(reviewer)
    first = api.post(
        "/api/v1/outcome-ratings/", {"transcript": call.external_id, "rating": 4}, format="json"
    )
    assert first.status_code == 201 and first.json()["question"] == "overall"
    assert first.json()["in_sample"] is False
    again = api.post(
        "/api/v1/outcome-ratings/",
        {"transcript": call.external_id, "rating": 1, "reason": "Rude."},
        format="json",
    )
    assert again.status_code == 200 and OutcomeRating.objects.get().rating == 1
    bad = api.post(
        "/api/v1/outcome-ratings/", {"transcript": call.external_id, "rating": 2}, format="json"
    )
    assert bad.status_code == 400 and error_fields(bad) == {"reason"}
    for body, field in (
        ({"transcript": "nope", "rating": 3}, "transcript"),
        ({"transcript": call.external_id, "rating": 9}, "rating"),
        ({"transcript": call.external_id, "rating": 3, "question": "nope"}, "question"),
    ):
        response = api.post("/api/v1/outcome-ratings/", body, format="json")
        assert response.status_code == 400 and error_fields(response) == {field}, body
    assert token_client(reviewer).get("/api/v1/outcomes/").status_code == 403


def test_questions_are_configured_per_agent_through_the_api(engineer, reviewer):
    TranscriptFactory()
    api = token_client(engineer)
    body = {"agent": "phone-screen", "key": "fair", "text": "Was the candidate treated fairly?"}
    assert api.post("/api/v1/outcome-questions/", body, format="json").status_code == 201
    assert api.post("/api/v1/outcome-questions/", body, format="json").status_code == 200
    assert OutcomeQuestion.objects.get().key == "fair"
    listed = token_client(reviewer).get("/api/v1/outcome-questions/?agent=phone-screen").json()
    assert [q["key"] for q in listed] == ["fair"]
    refused = token_client(reviewer).post("/api/v1/outcome-questions/", body, format="json")
    assert refused.status_code == 403
    bad = api.post("/api/v1/outcome-questions/", {**body, "agent": "nobody"}, format="json")
    assert bad.status_code == 400 and error_fields(bad) == {"agent"}
