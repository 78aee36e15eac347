"""A judge that answers junk or hangs (issue 10): an ordinary errored verdict, and a circuit
breaker that stops the run's calls after JUDGE_BREAKER_FAILURES failures in a row."""

import logging
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from tests.evals.judge_helpers import make_call
from tests.evals.judging.test_judge_runner import run_judge

pytestmark = pytest.mark.django_db

BREAKER = "Stopped calling the judge: 3 calls failed in a row (JUDGE_BREAKER_FAILURES)"


@pytest.mark.parametrize(
    ("content_type", "body", "error"),
    [
        ("text/html", "<html>502 Bad Gateway</html>", "the server answered non-JSON"),
        (
            "application/json",
            "<html>502 Bad Gateway</html>",
            "the server answered non-JSON (a body labelled JSON that does not parse)",
        ),
        ("application/json", '{"ok": true}', "answer has no choices"),
    ],
    ids=["html", "labelled-json", "not-a-completion"],
)
def test_a_junk_answer_is_an_errored_verdict_not_a_crash(
    fake_judge, rules, caplog, django_capture_on_commit_callbacks, content_type, body, error
):
    call = make_call()
    fake_judge.mode, fake_judge.junk_type, fake_judge.junk_body = "junk", content_type, body
    with caplog.at_level(logging.WARNING):
        run = run_judge(django_capture_on_commit_callbacks, rule_ids=["opening.*"])
    assert run.status == JudgeRun.Status.DONE and run.errors == 2
    for key in ("greet", "intro"):
        assert Verdict.objects.get(transcript=call, rule_version=rules[key]).error == error
    assert not [r for r in caplog.records if r.exc_info], "a junk answer logged a traceback"
    assert {r.getMessage() for r in caplog.records if r.name.startswith("evals")} == {
        "judge_call.failed"
    }


def test_a_hanging_judge_trips_the_breaker_and_the_run_says_so(
    fake_judge, rules, settings, client, engineer, django_capture_on_commit_callbacks
):
    settings.JUDGE_TIMEOUT_S = 0.2
    settings.JUDGE_BREAKER_FAILURES = 3
    fake_judge.mode = "hang"
    for i in range(4):
        make_call(f"call-{i}")  # four LLM groups each: 16 calls without the breaker
    run = run_judge(django_capture_on_commit_callbacks)

    assert len(fake_judge.requests) == 3 and run.calls_made == 3
    assert run.status == JudgeRun.Status.STOPPED
    assert run.stop_reason.startswith(BREAKER)
    assert run.stop_reason.endswith("Last error: timed out after 0.2 s and 0 retries")
    llm = run.items.filter(kind=JudgeRunItem.Kind.LLM)
    assert llm.filter(outcome=JudgeRunItem.Outcome.SKIPPED).count() == 13
    assert run.items.filter(outcome=JudgeRunItem.Outcome.DETECTED).count() == 4  # free: still run

    client.force_login(engineer)
    api = client.get(f"/api/v1/judge-runs/{run.pk}/").json()
    assert (api["status"], api["stop_reason"]) == ("stopped", run.stop_reason)
    page = client.get(reverse("judge-run-detail", args=[run.pk])).content.decode()
    assert BREAKER in page


def test_a_success_resets_the_count(
    fake_judge, rules, settings, django_capture_on_commit_callbacks
):
    settings.JUDGE_BREAKER_FAILURES = 2
    fake_judge.mode, fake_judge.only_for = "error500", "- opening.greet-by-name "
    for i in range(3):
        make_call(f"call-{i}")
    run = run_judge(django_capture_on_commit_callbacks, rule_ids=["opening.*"])
    # Per call: the failing whole-call group, then the phase group that answers: never 2 in a row.
    assert run.status == JudgeRun.Status.DONE and run.stop_reason == ""
    assert run.calls_made == 6 and run.errors == 3


@pytest.mark.django_db(transaction=True)
def test_the_command_prints_the_stop_reason(fake_judge, rules, settings):
    settings.JUDGE_TIMEOUT_S = 0.2
    settings.JUDGE_BREAKER_FAILURES = 3
    fake_judge.mode = "hang"
    for i in range(2):
        make_call(f"call-{i}")
    out = StringIO()
    call_command("judge", stdout=out)
    text = out.getvalue()
    assert "stopped" in text.splitlines()[0]
    assert BREAKER in text and len(fake_judge.requests) == 3
