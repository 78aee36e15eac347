from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from labeling.models import DailySample, Mark
from tests.factories import (
    DailySampleFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
    error_fields,
    token_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sampled_call():
    t = TranscriptFactory(external_id="call-000123")
    TurnFactory(transcript=t, index=0, text="Hi Dana")
    VerdictFactory(
        transcript=t, flagged=True, turn=0, turns=[0], severity="minor", rationale="Greeted twice."
    )
    VerdictFactory(transcript=t, flagged=False)
    SampleItemFactory(
        sample=DailySampleFactory(day=timezone.localdate()),
        transcript=t,
        inclusion_probability=0.25,
    )
    return t


def test_queue_next_marks_and_finish(reviewer, sampled_call):
    client = token_client(reviewer)
    r = client.post("/api/v1/queue/next/")
    assert r.status_code == 200
    body = r.json()
    assert (
        body["transcript"]["id"] == "call-000123"
        and body["transcript"]["turns"][0]["text"] == "Hi Dana"
    )
    assert body["assignment"]["inclusion_probability"] == 0.25
    assert {v["flagged"] for v in body["verdicts"]} == {True, False}
    assert all(v["my_mark"] is None for v in body["verdicts"])

    r = client.post("/api/v1/queue/finish/", {"transcript": "call-000123"}, format="json")
    assert r.status_code == 400 and "without your mark" in str(r.json())

    for v in body["verdicts"]:
        r = client.post("/api/v1/marks/", {"verdict": v["id"], "correct": True}, format="json")
        assert r.status_code == 201 and r.json()["in_sample"] is True
    first = body["verdicts"][0]["id"]
    r = client.post(
        "/api/v1/marks/", {"verdict": first, "correct": False, "note": "no"}, format="json"
    )
    assert (
        r.status_code == 200
        and Mark.objects.count() == 2
        and not Mark.objects.get(verdict_id=first).correct
    )
    again = client.post(
        "/api/v1/queue/next/"
    ).json()  # still held: the same call, now with my marks
    assert again["assignment"]["id"] == body["assignment"]["id"]
    assert {v["id"]: v["my_mark"]["correct"] for v in again["verdicts"]}[first] is False

    r = client.post("/api/v1/queue/finish/", {"transcript": "call-000123"}, format="json")
    assert r.status_code == 200 and r.json()["finished_at"]
    assert client.post("/api/v1/queue/next/").status_code == 204


def test_marks_outside_the_sample_and_errors(reviewer):
    client = token_client(reviewer)
    v = VerdictFactory()
    r = client.post("/api/v1/marks/", {"verdict": v.pk, "correct": False}, format="json")
    assert (
        r.status_code == 201 and r.json()["in_sample"] is False and r.json()["assignment"] is None
    )
    bad = VerdictFactory(error="timeout")
    r = client.post("/api/v1/marks/", {"verdict": bad.pk, "correct": True}, format="json")
    assert r.status_code == 400 and "errored" in str(r.json())
    r = client.post("/api/v1/marks/", {"verdict": 999999, "correct": True}, format="json")
    assert r.status_code == 400 and "verdict" in error_fields(r)
    r = client.post("/api/v1/marks/", {"verdict": v.pk}, format="json")
    assert r.status_code == 400 and "correct" in error_fields(r)


def test_permissions(engineer, sampled_call):
    client = token_client(engineer)
    assert client.post("/api/v1/queue/next/").status_code == 403
    assert (
        client.post("/api/v1/marks/", {"verdict": 1, "correct": True}, format="json").status_code
        == 403
    )
    assert APIClient().post("/api/v1/queue/next/").status_code == 401


def test_samples_read_and_make(reviewer, lead, settings):
    settings.DOCKET_SAMPLE_SIZE = 5
    for i in range(3):
        TranscriptFactory(started_at=timezone.now() - timedelta(days=1, hours=-1))
    assert token_client(reviewer).get("/api/v1/sample/").status_code == 404
    assert token_client(reviewer).post("/api/v1/samples/", {}, format="json").status_code == 403
    r = token_client(lead).post("/api/v1/samples/", {"day": "2026-06-02", "size": 2}, format="json")
    assert r.status_code == 201 and r.json()["day"] == "2026-06-02"
    assert (
        token_client(lead)
        .post("/api/v1/samples/", {"day": "2026-06-02"}, format="json")
        .status_code
        == 200
    )
    token_client(lead).post("/api/v1/samples/", {}, format="json")
    r = token_client(reviewer).get("/api/v1/sample/")
    assert r.status_code == 200 and r.json()["day"] == timezone.localdate().isoformat()
    for item in r.json()["items"]:
        assert (
            item["reason"] == "uniform"
            and item["reviews_done"] == 0
            and 0 < item["inclusion_probability"] <= 1
        )
    listed = token_client(reviewer).get("/api/v1/samples/").json()
    assert [s["day"] for s in listed["results"]][-1] == "2026-06-02"
    assert {s["day"]: s["items"] for s in listed["results"]} == {
        s.day.isoformat(): s.items.count() for s in DailySample.objects.all()
    }
    assert token_client(reviewer).get("/api/v1/sample/?day=june").status_code == 400


def test_schema_lists_the_review_endpoints(reviewer):
    client = token_client(reviewer)
    schema = client.get("/api/schema/?format=json").json()
    for path in [
        "/api/v1/queue/next/",
        "/api/v1/queue/finish/",
        "/api/v1/marks/",
        "/api/v1/sample/",
    ]:
        assert path in schema["paths"]


def test_skip_through_the_api_gives_the_call_away(reviewer, make_user, sampled_call):
    client = token_client(reviewer)
    assert client.post("/api/v1/queue/next/").status_code == 200
    r = client.post("/api/v1/queue/skip/", {"transcript": "call-000123"}, format="json")
    assert r.status_code == 200
    assert client.post("/api/v1/queue/next/").status_code == 204
    assert (
        token_client(make_user("reviewer")).post("/api/v1/queue/next/").json()["transcript"]["id"]
        == "call-000123"
    )
    r = client.post("/api/v1/queue/skip/", {"transcript": "nope"}, format="json")
    assert r.status_code == 400 and "transcript" in error_fields(r)
