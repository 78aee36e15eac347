"""Smaller refusals (issue 27, item 7): each answers a clear 4xx naming what is wrong."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests import factories as f
from tests.evals.evalrun_helpers import make_dataset
from tests.factories import token_client


@pytest.mark.django_db
@pytest.mark.parametrize("text", [5, True, None, ["hi"], {"a": 1}])
def test_classify_takes_text_as_a_string_only(engineer, text):
    r = token_client(engineer).post("/api/v1/classify/injection/", {"text": text}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "text"
    turns = {"text": "hi", "turns": [{"speaker": "user", "text": 5}]}
    r = token_client(engineer).post("/api/v1/classify/injection/", turns, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "turns[0].text"


@pytest.mark.django_db
def test_a_judge_name_past_200_characters_is_refused_not_cut(engineer):
    r = token_client(engineer).post(
        "/api/v1/classifier-logs/import/?judge=" + "j" * 201,
        b"",
        content_type="application/x-ndjson",
    )
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "judge"


@pytest.mark.django_db
def test_an_unknown_eval_run_agent_version_has_its_own_code(engineer):
    make_dataset()
    r = token_client(engineer).post(
        "/api/v1/eval-runs/",
        {"dataset": "booking-tools", "agent_version": "booking:nope", "rubric": "tool_selection"},
        format="json",
    )
    assert r.status_code == 400, r.content
    body = r.json()
    assert body["code"] == "unknown_agent_version" and body["errors"][0]["field"] == "agent_version"


@pytest.mark.django_db
def test_an_issue_row_action_asked_as_csv_is_refused_not_an_empty_200(engineer, reviewer):
    from labeling.services.issue_rows import issue_row_create

    row = issue_row_create(
        reporter=reviewer, transcript=f.TranscriptFactory(), turn=None, what="x", severity="minor"
    )
    c = token_client(engineer)
    for url in (
        f"/api/v1/issue-rows/{row.number}/assign/?format=csv",
        f"/api/v1/issue-rows/{row.number}/status/?format=csv",
    ):
        r = c.post(url, {"status": "triaged", "assignee": ""}, format="json")
        assert r.status_code == 406 and r.content, url
        assert r.json()["code"] == "not_acceptable"
    assert c.get(f"/api/v1/issue-rows/{row.number}/?format=csv").status_code == 406
    export = c.get("/api/v1/issue-rows/?format=csv")
    assert export.status_code == 200 and export["Content-Type"].startswith("text/csv")


def _deploy_warnings(**extra) -> str:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DOCKET_"))},
        "DJANGO_SECRET_KEY": "k" * 60 + "Zx9!",
        "DJANGO_ALLOWED_HOSTS": "docket.example.com",
        **extra,
    }
    done = subprocess.run(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), "check", "--deploy"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout + done.stderr


def test_w008_is_silenced_only_when_a_proxy_is_named():
    assert "security.W008" in _deploy_warnings(DJANGO_SSL_REDIRECT="0")
    assert "security.W008" not in _deploy_warnings(DJANGO_SSL_REDIRECT="0", DJANGO_BEHIND_PROXY="1")
