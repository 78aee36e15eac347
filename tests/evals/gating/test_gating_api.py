"""POST and GET /api/v1/gate-runs/: permissions and results."""

import pytest
from rest_framework.test import APIClient

from tests.evals.gating_helpers import wait_for_gate_run
from tests.factories import token_client

pytestmark = pytest.mark.django_db


def test_reviewer_cannot_run_a_gate(world, reviewer):
    r = token_client(reviewer).post(
        "/api/v1/gate-runs/", {"gate": "release", "candidate": "2026-11-21.1"}, format="json"
    )
    assert r.status_code == 403
    assert "run_gate" in r.json()["detail"]


def test_anonymous_is_refused(world):
    r = APIClient().post(
        "/api/v1/gate-runs/", {"gate": "release", "candidate": "2026-11-21.1"}, format="json"
    )
    assert r.status_code == 401


@pytest.mark.django_db(transaction=True)
def test_engineer_queues_a_gate_run_and_follows_it(world, engineer):
    c = token_client(engineer)
    r = c.post(
        "/api/v1/gate-runs/", {"gate": "release", "candidate": "2026-11-21.1"}, format="json"
    )
    # 202 at once, with the run still to decide: the request never waits for the judge.
    assert r.status_code == 202, r.content
    assert r.json()["status"] in ("pending", "running", "pass")
    first = wait_for_gate_run(r.json()["id"])
    assert first.status == "pass"
    world.flag("2026-11-28.1-1", world.leak, turn=4)
    r = c.post(
        "/api/v1/gate-runs/", {"gate": "release", "candidate": "2026-11-28.1"}, format="json"
    )
    assert r.status_code == 202
    wait_for_gate_run(r.json()["id"])
    body = c.get(f"/api/v1/gate-runs/{r.json()['id']}/").json()
    assert body["status"] == "fail" and body["baseline"] == "2026-11-21.1"
    safety = body["metrics"][0]
    assert safety["evidence"][0]["call"] == "2026-11-28.1-1" and safety["evidence"][0]["turn"] == 4
    listed = c.get("/api/v1/gate-runs/?gate=release&status=fail").json()
    assert listed["count"] == 1 and [x["id"] for x in listed["results"]] == [body["id"]]
    newest_first = c.get("/api/v1/gate-runs/?limit=1").json()
    assert newest_first["count"] == 2 and newest_first["results"][0]["id"] == body["id"]
    bad = c.get("/api/v1/gate-runs/?status=green").json()
    assert bad["code"] == "invalid" and bad["errors"][0]["field"] == "status"


def test_unknown_gate_or_version_is_a_400_naming_it(world, engineer):
    c = token_client(engineer)
    r = c.post(
        "/api/v1/gate-runs/", {"gate": "nightly", "candidate": "2026-11-21.1"}, format="json"
    )
    assert r.status_code == 400 and r.json()["detail"] == "gate: no gate 'nightly'"
    assert r.json()["code"] == "gate_cannot_run"
    r = c.post("/api/v1/gate-runs/", {"gate": "release"}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "candidate"


def test_results_need_run_gate_as_the_gate_pages_do(world, reviewer, engineer):
    token_client(engineer).post(
        "/api/v1/gate-runs/", {"gate": "release", "candidate": "2026-11-21.1"}, format="json"
    )
    run_id = token_client(engineer).get("/api/v1/gate-runs/").json()["results"][0]["id"]
    reviewer_client = token_client(reviewer)
    assert reviewer_client.get("/api/v1/gate-runs/").status_code == 403
    assert reviewer_client.get(f"/api/v1/gate-runs/{run_id}/").status_code == 403
