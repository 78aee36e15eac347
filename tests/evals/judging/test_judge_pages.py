"""Judge-run pages and the judge-runs API: permissions, the form, polling that stops."""

import time
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from evals.judging.services.runs import judge_run_create
from tests.evals.judge_helpers import make_call
from tests.factories import logged_in

pytestmark = pytest.mark.django_db


def test_the_list_shows_the_form_to_engineers_only(client, engineer, reviewer):
    page = logged_in(client, engineer).get(reverse("judge-run-list")).content.decode()
    assert 'action="/judge-runs/new/"' in page and ">Run judge</button>" in page
    assert 'href="/judge-runs/"' in page  # the nav link
    client.logout()
    page = logged_in(client, reviewer).get(reverse("judge-run-list")).content.decode()
    assert "Run judge</button>" not in page and 'href="/judge-runs/"' not in page
    assert client.post(reverse("judge-run-start"), {"action": "run"}).status_code == 403


def wait_for_run(pk: int, limit_s: float = 60) -> JudgeRun:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            run = JudgeRun.objects.get(pk=pk)
        except (
            OperationalError
        ):  # SQLite's shared-cache test database locks tables while the run writes
            run = None
        if run is not None and run.finished_at:
            return run
        time.sleep(0.05)
    raise AssertionError(f"judge run {pk} did not finish")


@pytest.mark.django_db(transaction=True)
def test_the_form_starts_a_run_and_the_page_shows_its_summary(client, engineer, fake_judge, rules):
    make_call("call-1")
    logged_in(client, engineer)
    resp = client.post(
        reverse("judge-run-start"), {"action": "run", "rules": "asking.*, signals.*"}
    )
    # No broker: the run works in a thread of this process while the page polls.
    run = wait_for_run(JudgeRun.objects.get().pk)
    assert resp.status_code == 302 and resp["Location"] == reverse(
        "judge-run-detail", args=[run.pk]
    )
    assert run.started_by == "marco" and run.params["rules"] == ["asking.*", "signals.*"]
    page = client.get(resp["Location"]).content.decode()
    assert "Judge run" in page and 'id="run-summary"' in page and "No errors." in page
    assert 'hx-trigger="every 1s"' not in page  # finished: nothing to poll


def test_the_estimate_spends_nothing(client, engineer, fake_judge, rules):
    make_call("call-1")
    logged_in(client, engineer)
    resp = client.post(
        reverse("judge-run-start"), {"action": "estimate"}, headers={"HX-Request": "true"}
    )
    html = " ".join(resp.content.decode().split())
    assert resp.status_code == 200 and html.startswith(
        '<section class="card jr-form" id="run-form"'
    )
    assert "Would make <strong>4</strong> judge calls" in html and "1 detector check " in html
    assert JudgeRun.objects.count() == 0 and fake_judge.requests == []


def test_bad_filters_are_named(client, engineer, rules):
    logged_in(client, engineer)
    resp = client.post(reverse("judge-run-start"), {"action": "run", "transcripts": "call-404"})
    assert (
        resp.status_code == 400
        and "transcript: no such transcript call-404" in resp.content.decode()
    )
    assert JudgeRun.objects.count() == 0


def test_polling_continues_while_running_then_stops_with_286(client, engineer, rules):
    call = make_call("call-1")
    run = JudgeRun.objects.create(
        status=JudgeRun.Status.RUNNING, tasks_total=1, params={"cost_cap": "0"}
    )
    item = JudgeRunItem.objects.create(
        run=run, transcript=call, kind="detectors", rule_version_ids=[rules["det"].pk]
    )
    logged_in(client, engineer)
    url = reverse("judge-run-detail", args=[run.pk])
    page = client.get(url).content.decode()
    assert 'hx-trigger="every 1s"' in page and f'hx-get="{url}"' in page
    poll = client.get(url, headers={"HX-Request": "true"})
    assert poll.status_code == 200 and 'hx-trigger="every 1s"' in poll.content.decode()

    from evals.judging.services.runs import judge_run_item_execute

    judge_run_item_execute(item_id=item.pk)
    poll = client.get(url, headers={"HX-Request": "true"})
    html = poll.content.decode()
    assert poll.status_code == 286 and 'id="run-summary"' in html and "hx-trigger" not in html
    assert Verdict.objects.filter(judge_run=run).count() == 1


def test_errors_show_on_the_run_page(
    client, engineer, fake_judge, rules, django_capture_on_commit_callbacks
):
    make_call("call-1")
    fake_judge.mode = "malformed"
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_create(rule_ids=["asking.*"])
    page = (
        logged_in(client, engineer).get(reverse("judge-run-detail", args=[run.pk])).content.decode()
    )
    assert (
        'id="run-errors"' in page and "answer is not JSON" in page and "asking.one-question" in page
    )


@pytest.mark.django_db(transaction=True)
def test_api_starts_and_reads_runs(engineer, reviewer, fake_judge, rules):
    make_call("call-1")
    api = APIClient()
    api.force_authenticate(reviewer)
    assert api.post("/api/v1/judge-runs/", {}, format="json").status_code == 403
    api.force_authenticate(engineer)
    resp = api.post(
        "/api/v1/judge-runs/", {"rules": ["boundaries.*"], "dry_run": True}, format="json"
    )
    assert resp.status_code == 200 and resp.json()["calls"] == 1 and JudgeRun.objects.count() == 0
    resp = api.post("/api/v1/judge-runs/", {"rules": ["boundaries.*"]}, format="json")
    assert resp.status_code == 202  # started: the run goes on in the background
    run_id = resp.json()["id"]
    wait_for_run(run_id)
    api.force_authenticate(reviewer)
    body = api.get(f"/api/v1/judge-runs/{run_id}/").json()
    assert body["status"] == "done" and body["calls_made"] == 1 and body["verdicts"]["total"] == 1
    assert body["url"].endswith(f"/judge-runs/{run_id}/")
    assert api.get("/api/v1/judge-runs/999999/").status_code == 404
    api.force_authenticate(engineer)
    bad = api.post("/api/v1/judge-runs/", {"rules": ["nope"]}, format="json")
    assert bad.status_code == 400 and "no active rule matches 'nope'" in bad.json()["detail"]


def test_the_schema_lists_the_judge_run_endpoints(client, reviewer):
    logged_in(client, reviewer)
    paths = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert paths["/api/v1/judge-runs/"]["post"]["operationId"] == "judge_runs_create"
    assert paths["/api/v1/judge-runs/"]["get"]["operationId"] == "judge_runs_list"
    assert "get" in paths["/api/v1/judge-runs/{id}/"]


@pytest.mark.django_db(transaction=True)
def test_a_stuck_run_can_be_queued_again(client, engineer, reviewer, rules):
    call = make_call("call-1")
    run = JudgeRun.objects.create(
        status=JudgeRun.Status.RUNNING, tasks_total=1, params={"cost_cap": "0"}
    )
    JudgeRunItem.objects.create(
        run=run, transcript=call, kind="detectors", rule_version_ids=[rules["det"].pk]
    )
    url = reverse("judge-run-resume", args=[run.pk])
    logged_in(client, engineer)
    assert (
        "Queue the remaining checks again"
        not in client.get(reverse("judge-run-detail", args=[run.pk])).content.decode()
    )
    JudgeRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - timedelta(minutes=5)
    )  # stuck
    client.logout()
    logged_in(client, reviewer)
    assert (
        "Queue the remaining checks again"
        not in client.get(reverse("judge-run-detail", args=[run.pk])).content.decode()
    )
    assert client.post(url).status_code == 403
    client.logout()
    logged_in(client, engineer)
    assert (
        "Queue the remaining checks again"
        in client.get(reverse("judge-run-detail", args=[run.pk])).content.decode()
    )
    resp = client.post(url)
    assert resp.status_code == 302
    run = wait_for_run(run.pk)
    assert run.status == JudgeRun.Status.DONE and Verdict.objects.filter(judge_run=run).count() == 1


def test_the_estimate_says_when_no_judge_is_configured(client, engineer, rules, settings):
    make_call("call-1")
    settings.JUDGE_BASE_URL = ""
    settings.JUDGE_API_KEY = ""
    logged_in(client, engineer)
    resp = client.post(
        reverse("judge-run-start"), {"action": "estimate"}, headers={"HX-Request": "true"}
    )
    html = " ".join(resp.content.decode().split())
    # Nothing can answer the four LLM groups: the estimate says they would be skipped, which
    # rules, why, and where to connect a judge; before it, the form already said so.
    assert "Would make <strong>0</strong> judge calls" in html
    assert 'data-testid="no-judge"' in html and "No judge is configured" in html
    assert "4 checks would be skipped: they need a model" in html
    assert "asking.one-question v1" in html and 'href="/judge-connection/"' in html
    assert 'data-testid="needs-model-note"' in html
    settings.JUDGE_BASE_URL = "http://127.0.0.1:9/v1"
    resp = client.post(
        reverse("judge-run-start"), {"action": "estimate"}, headers={"HX-Request": "true"}
    )
    html = " ".join(resp.content.decode().split())
    assert "Would make <strong>4</strong> judge calls" in html
    assert "No judge is configured" not in html and "needs-model-note" not in html
