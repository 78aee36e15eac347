"""The conversation judge's API (202 and polling, scores, versions) and its pages."""

import time

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from evals.conversation import prompt as jc
from evals.conversation.models import ConversationScore
from evals.conversation.services import conversation_result_record
from evals.judging.models import JudgeRun
from tests.evals.conversation_helpers import DRIFT, scored_calls
from tests.evals.judge_helpers import make_call


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def get_json(client, url: str) -> dict:
    """GET url, again while SQLite's shared-cache test database has a table locked by the run's
    thread."""
    for _ in range(50):
        try:
            return client.get(url).json()
        except OperationalError:
            time.sleep(0.1)
    raise AssertionError(f"{url} stayed locked")


@pytest.mark.django_db(transaction=True)
def test_post_answers_202_and_the_run_is_followed_to_its_scores(fake_judge, engineer):
    make_call("call-1")
    fake_judge.conversation_score = 7
    client = api(engineer)
    r = client.post("/api/v1/conversation-runs/", {"transcripts": ["call-1"]}, format="json")
    assert r.status_code == 202, r.content
    body = r.json()
    assert body["poll"].endswith(f"/api/v1/judge-runs/{body['id']}/")
    assert r["Location"] == body["poll"]
    assert body["judge"] == "gpt-4o-mini/conversation-v1"
    poll, deadline = body["poll"], time.monotonic() + 30
    while body["status"] in ("pending", "running") and time.monotonic() < deadline:
        time.sleep(0.1)
        body = get_json(client, poll)
    assert body["status"] == "done" and body["calls_made"] == 1
    assert body["verdicts"] == {"total": 2, "flagged": 0, "errored": 0}
    scores = get_json(client, "/api/v1/conversation-scores/?transcript=call-1")
    assert [s["score"] for s in scores["results"]] == [7]
    runs = get_json(client, "/api/v1/conversation-runs/")
    assert [x["id"] for x in runs["results"]] == [body["id"]]
    web = Client()
    web.force_login(engineer)
    html = web.get(reverse("judge-run-detail", args=[body["id"]])).content.decode()
    assert "gpt-4o-mini/conversation-v1" in html and "2 verdicts written" in html
    assert "See the conversation scores" in html


@pytest.mark.django_db
def test_dry_run_answers_200_with_the_estimate_and_bad_input_is_400(fake_judge, engineer):
    make_call("call-1")
    client = api(engineer)
    r = client.post("/api/v1/conversation-runs/", {"dry_run": True}, format="json")
    assert r.status_code == 200 and r.json()["calls"] == 1
    assert r.json()["prompt_version"] == jc.PROMPT_VERSION
    assert JudgeRun.objects.count() == 0
    r = client.post("/api/v1/conversation-runs/", {"transcripts": ["nope"]}, format="json")
    assert r.status_code == 400 and "no such transcript nope" in r.content.decode()


@pytest.mark.django_db
def test_a_reviewer_reads_scores_but_cannot_start_a_run(reviewer):
    scored_calls()
    client = api(reviewer)
    assert client.post("/api/v1/conversation-runs/", {}, format="json").status_code == 403
    r = client.get("/api/v1/conversation-scores/", {"agent_version": "v2", "with_findings": "yes"})
    [row] = r.json()["results"]
    assert (row["transcript"], row["score"], row["agent_version"]) == ("v2-1", 3, "v2")
    assert row["findings"][0] == {**DRIFT[0], "check": jc.NO_DRIFT}
    assert client.get("/api/v1/conversation-scores/", {"with_findings": "maybe"}).status_code == 400
    versions = {v["version"]: v for v in client.get("/api/v1/conversation-versions/").json()}
    assert versions["v1"]["mean"] == 8.5 and versions["v2"]["mean"] == 6.0
    assert versions["v2"]["flagged_calls"] == 1
    assert versions["v2"]["finding_counts"] == {"repeated_ground": 1}
    assert versions["v2"]["interval"][0] < 6.0 < versions["v2"]["interval"][1]


@pytest.mark.django_db
def test_recorded_results_are_idempotent_and_checked():
    old, _ = scored_calls()
    t = old.transcripts.first()
    again = conversation_result_record(
        transcript=t,
        judge_name="gpt-4o-mini/conversation-v1",
        answer={"plan_reason": "", "drift_reason": "", "findings": [], "score": 1},
        plan=[],
    )
    assert again is False and ConversationScore.objects.get(transcript=t).score == 9
    with pytest.raises(ValueError, match="not a conversation judge"):
        conversation_result_record(
            transcript=t, judge_name="gpt-4o-mini/conduct-v1", answer={}, plan=[]
        )


@pytest.mark.django_db
def test_pages_show_versions_calls_and_the_call_panel(client, reviewer):
    _, new = scored_calls()
    client.force_login(reviewer)
    html = client.get(reverse("conversation-index")).content.decode()
    assert "8.50" in html and "6.00" in html and "repeated_ground × 1" in html
    assert reverse("conversation-version", args=[new.pk]) in html
    assert "Run the conversation judge" not in html  # reviewers read; engineers run

    html = client.get(reverse("conversation-version", args=[new.pk])).content.decode()
    assert html.index("v2-1") < html.index("v2-0")  # lowest score first
    assert 'href="/calls/v2-1/?turn=4#turn-4"' in html and "Asks the role a second time." in html

    html = client.get(reverse("transcript-detail", args=["v2-1"])).content.decode()
    assert 'data-testid="conversation-panel"' in html and "<strong>3</strong>/10" in html
    assert "opening → asking → closing" in html
    assert client.get(reverse("conversation-version", args=[999])).status_code == 404
    html = client.get(reverse("transcript-detail", args=["v1-0"])).content.decode()
    assert "All phases in order. Steady." in html


@pytest.mark.django_db
def test_the_run_form_estimates_and_without_a_judge_says_so(client, engineer, settings):
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    make_call("call-1")
    client.force_login(engineer)
    r = client.post(reverse("conversation-run-start"), {"action": "estimate"})
    html = r.content.decode()
    assert r.status_code == 200 and "Would make <strong>1</strong> judge call" in html
    assert "No judge is configured" in html
    r = client.post(reverse("conversation-run-start"), {"action": "run"})
    assert r.status_code == 400 and "no LLM judge is configured" in r.content.decode()


@pytest.mark.django_db
def test_version_figures_summed_in_sql_match_a_recompute_score_by_score(client, reviewer):
    """conversation_versions against the straightforward recompute (every score and finding read
    in Python), for all versions and for one; the version page pages its calls."""
    import random

    from core.stats import mean_interval
    from evals.conversation.selectors import conversation_versions
    from evals.judging.models import Judge

    _, new = scored_calls()
    rng = random.Random(26)
    other = Judge.objects.create(name="gpt-4o/conversation-v1", kind="llm")
    for n in range(60):
        t = make_call(f"many-{n}", agent_version=new)
        errored = n % 13 == 0
        ConversationScore.objects.create(
            transcript=t,
            judge=other,
            score=None if errored or n % 17 == 0 else rng.randint(1, 10),
            error="timeout" if errored else "",
            findings=[
                {"type": rng.choice(["a", "b"]), "check": "c", "turns": [1], "note": "x"}
                for _ in range(rng.choice([0, 1, 2]))
            ],
        )

    def recompute(version_id):
        out = {}
        for s in ConversationScore.objects.select_related("transcript"):
            if version_id and s.transcript.agent_version_id != version_id:
                continue
            g = out.setdefault((s.transcript.agent_version_id, s.judge_id), [0, 0, [], 0, {}])
            if s.error:
                g[1] += 1
                continue
            g[0] += 1
            if s.score is not None:
                g[2].append(float(s.score))
            g[3] += bool(s.findings)
            for f in s.findings:
                g[4][f.get("type", "?")] = g[4].get(f.get("type", "?"), 0) + 1
        return {
            k: (c, e, sum(v) / len(v) if v else None, mean_interval(v), fc, dict(sorted(t.items())))
            for k, (c, e, v, fc, t) in out.items()
        }

    for version_id in (None, new.pk):
        got = {
            (r.version_id, r.judge_id): (
                r.calls,
                r.errored,
                r.mean,
                r.interval,
                r.flagged_calls,
                r.finding_counts,
            )
            for r in conversation_versions(version_id=version_id)
        }
        assert got == recompute(version_id) and len(got) >= (1 if version_id else 3)
    client.force_login(reviewer)
    html = client.get(reverse("conversation-version", args=[new.pk])).content.decode()
    assert "page 1 of 2" in html and html.count('class="card conv-call"') == 50
    html = client.get(reverse("conversation-version", args=[new.pk]) + "?page=2").content.decode()
    scored = ConversationScore.objects.filter(transcript__agent_version=new).count()
    assert html.count('class="card conv-call"') == scored - 50
