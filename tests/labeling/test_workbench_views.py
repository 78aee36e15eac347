"""The rule workbench's pages and API: the same services and permissions, a run in the background
(or on a real Celery worker), the progress fragment that stops polling when the run ends."""

import pytest
from rest_framework.test import APIClient

from evals.judging.models import JudgeRun
from evals.rules.models import RuleVersion
from evals.workbench.models import RuleDraft
from labeling.models import IssueRow
from labeling.services.issue_rows import issue_row_create
from tests.evals.judging.test_judge_celery import redis_worker  # noqa: F401 (a fixture)
from tests.evals.judging.test_judge_pages import wait_for_run
from tests.factories import logged_in
from tests.labeling.workbench_helpers import DRAFT_TEXT, build_world, responder


@pytest.mark.django_db(transaction=True)
def test_the_api_makes_estimates_runs_and_saves_a_draft(fake_judge, engineer, reviewer, lead):
    world = build_world()
    fake_judge.responder = responder(world)
    api = APIClient()
    api.force_authenticate(reviewer)
    assert api.post("/api/v1/rule-drafts/", {}, format="json").status_code == 403
    api.force_authenticate(engineer)
    bad = api.post("/api/v1/rule-drafts/", {"rule": "boundaries.no-hints"}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "text"
    made = api.post(
        "/api/v1/rule-drafts/", {"rule": "boundaries.no-hints", "text": DRAFT_TEXT}, format="json"
    )
    assert made.status_code == 201, made.content
    draft = made.json()
    assert draft["base_version"] == 1 and draft["run"] is None and draft["source"] == "api"
    est = api.get(f"/api/v1/rule-drafts/{draft['id']}/estimate/?size=8").json()
    assert (est["calls"], est["disagreements_drawn"], est["judge_calls"]) == (8, 5, 8)
    assert api.get(f"/api/v1/rule-drafts/{draft['id']}/estimate/?size=0").status_code == 400

    api.force_authenticate(reviewer)
    assert (
        api.post(f"/api/v1/rule-drafts/{draft['id']}/runs/", {}, format="json").status_code == 403
    )
    api.force_authenticate(engineer)
    started = api.post(f"/api/v1/rule-drafts/{draft['id']}/runs/", {"size": 50}, format="json")
    assert started.status_code == 202 and started["Location"].endswith(
        f"/rule-drafts/{draft['id']}/"
    )
    wait_for_run(started.json()["run"]["judge_run"])
    body = api.get(f"/api/v1/rule-drafts/{draft['id']}/").json()
    run = body["run"]
    assert run["finished"] and run["compared"] == 14 and run["calls_made"] == 14
    assert run["draft_figures"]["raw"]["tp"] == 5 and run["base_figures"]["raw"]["fp"] == 3
    assert (run["now_agree"], run["now_disagree"]) == (5, 1)
    flip = next(f for f in run["flips"] if f["now"] == "disagrees")
    assert flip["transcript"] == "wb-0001" and flip["draft"]["flagged"] and flip["turn"] == 2

    # Leads alone say it changes the meaning.
    meaning = f"/api/v1/rule-drafts/{draft['id']}/meaning/"
    assert (
        api.post(meaning, {"changes_meaning": True, "reason": "x"}, format="json").status_code
        == 403
    )
    api.force_authenticate(lead)
    no_reason = api.post(meaning, {"changes_meaning": True}, format="json")
    assert no_reason.status_code == 400 and no_reason.json()["errors"][0]["field"] == "reason"
    said = api.post(meaning, {"changes_meaning": False}, format="json").json()
    assert said["changes_meaning"] is False and said["run"]["carried"] is True

    api.force_authenticate(engineer)
    saved = api.post(f"/api/v1/rule-drafts/{draft['id']}/save/", format="json")
    assert saved.status_code == 201 and saved.json()["version"] == 2
    assert saved.json()["estimate"]["figures"]["raw"]["tp"] == 5
    again = api.post(f"/api/v1/rule-drafts/{draft['id']}/save/", format="json")
    assert again.status_code == 409 and again.json()["code"] == "conflict"
    listed = api.get("/api/v1/rule-drafts/?rule=boundaries.no-hints").json()
    assert [d["saved_as_version"] for d in listed] == [2]
    assert api.get("/api/v1/rule-drafts/999999/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_pages_from_the_rules_page_to_a_saved_version(client, fake_judge, engineer, lead):
    world = build_world()
    fake_judge.responder = responder(world)
    logged_in(client, engineer)
    rules_page = client.get("/rules/boundaries.no-hints/").content.decode()
    link = f"/workbench/rules/boundaries.no-hints/?base={world.v1.pk}"
    assert link.replace("&", "&amp;") in rules_page or link in rules_page
    page = client.get(link).content.decode()
    assert 'name="text"' in page and world.v1.text in page
    # A bad draft is refused beside the form, nothing made.
    bad = client.post(
        "/workbench/rules/boundaries.no-hints/drafts/",
        {"base": world.v1.pk, "text": world.v1.text},
    )
    assert bad.status_code == 400 and "unchanged from version 1" in bad.content.decode()
    assert not RuleDraft.objects.exists()
    made = client.post(
        "/workbench/rules/boundaries.no-hints/drafts/",
        {"base": world.v1.pk, "text": DRAFT_TEXT, "note": "rephrasing"},
    )
    draft = RuleDraft.objects.get()
    assert made["Location"] == f"/workbench/drafts/{draft.pk}/"
    page = client.get(f"/workbench/drafts/{draft.pk}/?size=8").content.decode()
    assert 'data-testid="estimate"' in page and "<strong>5</strong> of 5 disagreements" in page
    assert "Not run yet." in page
    client.post(f"/workbench/drafts/{draft.pk}/run/", {"size": "8"})
    run = wait_for_run(JudgeRun.objects.get().pk)
    assert run.status == "done" and run.calls_made == 8
    fragment = client.get(f"/workbench/drafts/{draft.pk}/progress/", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 286  # the run ended: htmx stops polling
    html = fragment.content.decode()
    assert 'id="wb-sides"' in html and "now agrees with reviewers" in html
    assert 'href="/calls/wb-0010/?turn=2#turn-2"' in html  # a subtle hint, now caught
    # The rule's comparison table lists it with its figures and its diff.
    compare = client.get("/workbench/rules/boundaries.no-hints/").content.decode()
    assert f'data-draft="{draft.pk}"' in compare and "<ins>" in compare
    # Engineers cannot say it changes the meaning; leads can.
    assert client.post(f"/workbench/drafts/{draft.pk}/meaning/", {}).status_code == 403
    saved = client.post(f"/workbench/drafts/{draft.pk}/save/")
    assert saved["Location"] == "/rules/boundaries.no-hints/#v2"
    v2 = RuleVersion.objects.get(rule=world.v1.rule, number=2)
    assert v2.estimate["carried"] and v2.source == f"workbench draft {draft.pk}"
    rules_page = client.get("/rules/boundaries.no-hints/").content.decode()
    assert (
        "Estimated from version 1&#x27;s marks" in rules_page
        or "Estimated from version 1" in rules_page
    )
    logged_in(client, lead)
    cal = client.get(f"/calibration/rule-versions/{v2.pk}/").content.decode()
    assert 'data-testid="estimate"' in cal and "Promotion still needs its own marks" in cal
    assert 'data-testid="marks-needed"' in cal


@pytest.mark.django_db
def test_an_issue_row_fix_leads_to_the_workbench(client, fake_judge, engineer):
    world = build_world()
    row = issue_row_create(
        transcript=world.verdicts["wb-0010"].transcript,
        turn=2,
        what="A subtle hint the judge missed.",
        severity="major",
        reporter=engineer,
    )
    logged_in(client, engineer)
    page = client.get(f"/issues/{row.number}/fix-rule/?rule=boundaries.no-hints").content.decode()
    assert 'data-testid="try-in-workbench"' in page
    made = client.post(
        "/workbench/rules/boundaries.no-hints/drafts/",
        {"rule": "boundaries.no-hints", "text": DRAFT_TEXT, "row": str(row.number)},
    )
    draft = RuleDraft.objects.get()
    assert made.status_code == 302 and draft.issue_row == row.number
    assert draft.source == f"issue row {row.number}"
    assert IssueRow.objects.get(pk=row.pk).outcome == ""  # triaged only once it is saved
    bad = client.post(
        "/workbench/rules/boundaries.no-hints/drafts/", {"text": DRAFT_TEXT, "row": "999"}
    )
    assert bad.status_code == 400 and "no issue row" in bad.content.decode()


@pytest.mark.redis
@pytest.mark.usefixtures("redis_worker")
@pytest.mark.django_db(transaction=True)
def test_a_draft_runs_on_a_real_celery_worker(fake_judge, engineer):
    import threading

    from labeling.selectors.workbench import workbench_result
    from labeling.services.workbench import workbench_draft_create, workbench_run_start
    from tests.evals.judging.test_judge_celery import TASK_THREADS, _wait_for

    TASK_THREADS.clear()
    world = build_world()
    fake_judge.responder = responder(world)
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    draft_run = workbench_run_start(draft=draft, size=50, by=engineer)
    run = _wait_for(draft_run.judge_run_id)
    # One Celery task per call, each on a worker thread, none in this one.
    assert len(TASK_THREADS) == 14 and threading.get_ident() not in TASK_THREADS
    assert run.status == JudgeRun.Status.DONE and run.calls_made == 14 and run.errors == 0
    result = workbench_result(draft_run)
    assert (result.now_agree, result.now_disagree, result.compared) == (5, 1, 14)


@pytest.mark.django_db
def test_the_judge_run_page_of_a_draft_links_its_result(
    client, fake_judge, engineer, django_capture_on_commit_callbacks
):
    from labeling.services.workbench import workbench_draft_create, workbench_run_start

    world = build_world()
    fake_judge.responder = responder(world)
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    with django_capture_on_commit_callbacks(execute=True):
        draft_run = workbench_run_start(draft=draft, size=50, by=engineer)
    logged_in(client, engineer)
    page = client.get(f"/judge-runs/{draft_run.judge_run_id}/").content.decode()
    assert f'href="/workbench/drafts/{draft.pk}/"' in page and "kept apart" in page
