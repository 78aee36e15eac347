"""Datasets and eval runs over HTTP, and their pages."""

import time

import pytest
from django.db import OperationalError

from evals.evalruns.models import EvalRun
from evals.evalruns.services import eval_run_create, eval_run_execute
from tests.evals.evalrun_helpers import ROWS, jsonl, make_dataset, make_version
from tests.factories import token_client

pytestmark = pytest.mark.django_db


def post_lines(client, url, rows):
    return client.generic("POST", url, b"".join(jsonl(rows)), content_type="application/x-ndjson")


def test_dataset_import_over_http(engineer, reviewer):
    c = token_client(engineer)
    r = post_lines(c, "/api/v1/datasets/import/?name=booking-tools", ROWS)
    assert r.status_code == 201, r.content
    assert r.json()["version"] == 1 and r.json()["rows_count"] == 5 and r.json()["changed"]
    again = post_lines(c, "/api/v1/datasets/import/?name=booking-tools", ROWS)
    assert again.status_code == 200 and not again.json()["changed"]
    bad = post_lines(c, "/api/v1/datasets/import/?name=booking-tools", [*ROWS[:1], {"id": 3}])
    assert bad.status_code == 400 and bad.json()["code"] == "import_failed"
    assert bad.json()["errors"][0]["line"] == "2" and bad.json()["errors"][0]["field"] == "messages"
    listed = c.get("/api/v1/datasets/").json()
    assert [d["name"] for d in listed["results"]] == ["booking-tools"]
    refused = post_lines(token_client(reviewer), "/api/v1/datasets/import/?name=x", ROWS)
    assert refused.status_code == 403


def test_dry_run_over_http_spends_nothing(engineer, fake_chat):
    make_dataset()
    make_version()
    r = token_client(engineer).post(
        "/api/v1/eval-runs/",
        {
            "dataset": "booking-tools",
            "agent_version": "2026-12-01.1",
            "rubric": "safety",
            "dry_run": True,
        },
        format="json",
    )
    assert r.status_code == 200 and r.json()["judge_calls"] == 5
    assert not fake_chat.requests and not EvalRun.objects.exists()


def test_unknown_dataset_or_rubric_is_refused(engineer, reviewer, fake_chat):
    make_version()
    c = token_client(engineer)
    body = {"dataset": "nope", "agent_version": "2026-12-01.1", "rubric": "safety"}
    r = c.post("/api/v1/eval-runs/", body, format="json")
    assert r.status_code == 400 and "no dataset 'nope'" in r.json()["detail"]
    r = c.post("/api/v1/eval-runs/", {**body, "rubric": "vibes"}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "rubric"
    r = token_client(reviewer).post("/api/v1/eval-runs/", body, format="json")
    assert r.status_code == 403


@pytest.mark.django_db(transaction=True)
def test_engineer_queues_an_eval_run_and_follows_it(engineer, fake_chat):
    make_dataset()
    make_version()
    c = token_client(engineer)
    r = c.post(
        "/api/v1/eval-runs/",
        {
            "dataset": "booking-tools",
            "agent_version": "booking:2026-12-01.1",
            "rubric": "tool_selection",
            "concurrency": 2,
        },
        format="json",
    )
    assert r.status_code == 202, r.content
    assert r.json()["status"] in ("pending", "running", "done")
    run_id = r.json()["id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            body = c.get(f"/api/v1/eval-runs/{run_id}/").json()
        except OperationalError:  # SQLite's shared in-memory test database, while the run writes
            continue
        if body["finished_at"]:
            break
    assert body["status"] == "done" and body["rows_scored"] == 3 and body["rows_errored"] == 2
    rows = {row["row"]: row for row in body["rows"]}
    assert rows["wipe"]["score"] == 5 and "delete_account" in rows["wipe"]["reason"]
    assert rows["agent-down"]["score"] is None and rows["agent-down"]["error"].startswith("agent:")
    assert rows["refund"]["tool_calls"] == ["lookup_order", "issue_refund", "lookup_order"]
    assert body["url"].endswith(f"/eval-runs/{run_id}/")
    listed = c.get("/api/v1/eval-runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["pass_rate"] == pytest.approx(66.67)


def finished_run():
    run = eval_run_create(
        dataset=make_dataset(), agent_version=make_version(), rubric="tool_selection"
    )
    return eval_run_execute(run_id=run.pk)


def test_run_page_shows_rows_scores_reasons_and_errors(client, reviewer, fake_chat):
    run = finished_run()
    client.force_login(reviewer)
    page = client.get(f"/eval-runs/{run.pk}/").content.decode()
    assert "Eval run" in page and "tool_selection" in page and "66.7%" in page
    assert "A destructive action nobody asked for." in page  # a reason
    assert "agent: agent server answered HTTP 500" in page  # an error
    assert "lookup_order → issue_refund → lookup_order" in page
    assert "nothing to compare with yet" in page
    # The page's poll stops once the run has finished.
    polled = client.get(f"/eval-runs/{run.pk}/", headers={"HX-Request": "true"})
    assert polled.status_code == 286
    listing = client.get("/eval-runs/").content.decode()
    assert f"/eval-runs/{run.pk}/" in listing and "booking-tools v1" in listing
    assert "Run an eval" not in listing  # reviewers follow runs; engineers and leads start them


def test_engineer_estimates_and_starts_from_the_page(client, engineer, fake_chat):
    make_dataset()
    make_version()
    client.force_login(engineer)
    form = {
        "dataset": "booking-tools",
        "agent_version": "booking:2026-12-01.1",
        "rubric": "helpfulness",
        "threshold": 70,
        "action": "estimate",
    }
    page = client.post("/eval-runs/new/", form).content.decode()
    assert "5 rows of booking-tools v1" in page and not EvalRun.objects.exists()
    bad = client.post("/eval-runs/new/", {**form, "rubric": "custom", "action": "run"})
    assert bad.status_code == 400 and "a custom rubric needs its text" in bad.content.decode()
