"""The conversation judge against the fake chat-completions server (tests/evals/judge_server.py)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evals.conversation import prompt as jc
from evals.conversation.models import ConversationScore
from evals.conversation.services import agent_plan_set, conversation_judge_create
from evals.judging.models import Judge, JudgeCacheEntry, JudgeRun, JudgeRunItem, Verdict
from evals.judging.prompt import AnswerInvalid
from evals.judging.services.runs import JudgeRunInvalid, judge_run_create
from evals.rules.models import RuleVersion
from tests.evals.judge_helpers import make_call

pytestmark = pytest.mark.django_db


def run_conv(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        run = conversation_judge_create(**kwargs)
    run.refresh_from_db()
    return run


def user_message(req):
    return next(m for m in req["body"]["messages"] if m["role"] == "user")["content"]


def test_one_call_per_transcript_with_plan_rubric_and_reason_before_score(
    fake_judge, django_capture_on_commit_callbacks
):
    t = make_call()
    agent_plan_set(agent=t.agent_version.agent.name, phases=["opening", "asking", "closing"])
    fake_judge.conversation_score = 4
    fake_judge.conversation_findings = [
        {"type": "repeated_ground", "turns": [4], "note": "Asks the role again."},
        {"type": "phase_unfinished", "turns": [5], "note": "Closes without questions."},
    ]
    run = run_conv(django_capture_on_commit_callbacks, transcript_ids=["call-1"])

    assert len(fake_judge.requests) == 1
    assert run.status == JudgeRun.Status.DONE and run.calls_made == 1 and run.errors == 0
    assert run.judge.name == "gpt-4o-mini/conversation-v1" and run.judge.kind == Judge.Kind.LLM
    body = fake_judge.requests[0]["body"]
    schema = body["response_format"]["json_schema"]["schema"]
    props = list(schema["properties"])
    assert props.index("plan_reason") < props.index("score")
    assert props.index("drift_reason") < props.index("score")
    assert schema["properties"]["score"]["minimum"] == 1
    assert schema["properties"]["score"]["maximum"] == 10
    finding_turns = schema["properties"]["findings"]["items"]["properties"]["turns"]
    assert finding_turns["items"]["enum"] == [0, 2, 4, 5]  # agent turns only
    prompt = user_message(fake_judge.requests[0])
    assert "1. opening, 2. asking, 3. closing" in prompt
    assert "[2] AGENT (asking): What is your current role?" in prompt
    assert f"- {jc.NO_DRIFT}: {jc.CHECKS[jc.NO_DRIFT]}" in prompt

    score = ConversationScore.objects.get()
    assert (score.score, score.judge, score.judge_run) == (4, run.judge, run)
    assert score.plan == ["opening", "asking", "closing"]
    assert [f["type"] for f in score.findings] == ["repeated_ground", "phase_unfinished"]
    assert score.findings[0]["check"] == jc.NO_DRIFT
    verdicts = {v.rule_version.rule.rule_id: v for v in Verdict.objects.filter(judge=run.judge)}
    assert set(verdicts) == {jc.PLAN_FOLLOWED, jc.NO_DRIFT}
    drift = verdicts[jc.NO_DRIFT]
    assert drift.flagged and drift.turn == 4 and drift.turns == [4] and drift.severity == "major"
    assert "repeated ground: Asks the role again." in drift.rationale
    plan = verdicts[jc.PLAN_FOLLOWED]
    assert plan.flagged and plan.turns == [5]
    assert drift.rule_version.rule.group == jc.GROUP
    assert drift.rule_version.status == RuleVersion.Status.CANDIDATE


def test_clean_call_gives_unflagged_verdicts_with_the_reasons(
    fake_judge, django_capture_on_commit_callbacks
):
    make_call()
    run_conv(django_capture_on_commit_callbacks)
    verdicts = Verdict.objects.order_by("rule_version__rule__rule_id")
    assert [v.flagged for v in verdicts] == [False, False]
    assert [v.rationale for v in verdicts] == [
        "The agent kept one persona.",
        "Every phase happened in order.",
    ]
    assert ConversationScore.objects.get().score == 9


def test_plan_defaults_to_the_calls_phase_labels(fake_judge, django_capture_on_commit_callbacks):
    make_call()
    run_conv(django_capture_on_commit_callbacks)
    assert "1. opening, 2. asking, 3. closing" in user_message(fake_judge.requests[0])


def test_cached_rerun_makes_no_call_and_a_new_plan_does(
    fake_judge, django_capture_on_commit_callbacks
):
    t = make_call()
    run_conv(django_capture_on_commit_callbacks)
    assert JudgeCacheEntry.objects.count() == 1
    plan = conversation_judge_create(dry_run=True)
    assert (plan.calls, plan.cache_hits) == (0, 1)
    again = run_conv(django_capture_on_commit_callbacks)
    assert len(fake_judge.requests) == 1
    assert again.cache_hits == 1 and again.calls_made == 0
    assert ConversationScore.objects.count() == 1  # the key is written once

    agent_plan_set(agent=t.agent_version.agent.name, phases=["opening", "closing"])
    plan = conversation_judge_create(dry_run=True)
    assert plan.calls == 1 and plan.est_tokens_in > 0 and plan.est_tokens_out == jc.OUT_TOKENS


def test_errored_call_is_recorded_and_replaced_on_rerun(
    fake_judge, django_capture_on_commit_callbacks
):
    make_call()
    fake_judge.mode = "malformed"
    run = run_conv(django_capture_on_commit_callbacks)
    assert run.errors == 2 and run.items.get().outcome == JudgeRunItem.Outcome.ERROR
    score = ConversationScore.objects.get()
    assert score.score is None and "not usable JSON" in score.error
    assert all(v.error for v in Verdict.objects.all())

    fake_judge.mode = ""
    run_conv(django_capture_on_commit_callbacks)
    score.refresh_from_db()
    assert score.score == 9 and score.error == ""
    assert not any(v.error for v in Verdict.objects.all())


def test_an_answer_citing_a_user_turn_or_missing_the_score_is_an_error(
    fake_judge, django_capture_on_commit_callbacks
):
    make_call()
    fake_judge.mode = "user-turn"
    run_conv(django_capture_on_commit_callbacks)
    assert "findings.0.turns.0" in ConversationScore.objects.get().error
    schema = jc.answer_schema([0, 2])
    with pytest.raises(AnswerInvalid, match="fails 'required'"):
        jc.answer_validate('{"plan_reason": "", "drift_reason": "", "findings": []}', schema)
    with pytest.raises(AnswerInvalid, match="fails 'maximum'"):
        jc.answer_validate(
            '{"plan_reason": "", "drift_reason": "", "findings": [], "score": 11}', schema
        )


def test_breaker_stops_the_run_after_failures_in_a_row(
    fake_judge, settings, django_capture_on_commit_callbacks
):
    settings.JUDGE_BREAKER_FAILURES = 2
    for i in range(4):
        make_call(external_id=f"call-{i}")
    fake_judge.mode = "error500"
    run = run_conv(django_capture_on_commit_callbacks)
    assert len(fake_judge.requests) == 2
    assert run.status == JudgeRun.Status.STOPPED and "2 calls failed in a row" in run.stop_reason
    outcomes = sorted(run.items.values_list("outcome", flat=True))
    assert outcomes == ["error", "error", "skipped", "skipped"]


def test_conduct_runs_leave_the_conversation_checks_alone(
    fake_judge, django_capture_on_commit_callbacks
):
    make_call()
    run_conv(django_capture_on_commit_callbacks)
    fake_judge.requests.clear()
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_create()
    assert run.tasks_total == 0 and fake_judge.requests == []


def test_no_judge_configured_is_a_clear_error(settings):
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    make_call()
    with pytest.raises(JudgeRunInvalid, match="no LLM judge is configured"):
        conversation_judge_create()


@pytest.mark.django_db(transaction=True)
def test_cli_judges_prints_scores_and_sets_a_plan(fake_judge):
    t = make_call()
    out = StringIO()
    call_command(
        "conversation_judge",
        "plan",
        t.agent_version.agent.name,
        "opening,asking,closing",
        stdout=out,
    )
    assert "opening → asking → closing" in out.getvalue()
    fake_judge.conversation_score = 6
    fake_judge.conversation_findings = [{"type": "loop", "turns": [4], "note": "Loops."}]
    out = StringIO()
    call_command("conversation_judge", "run", "--transcript", "call-1", stdout=out)
    text = out.getvalue()
    assert " done in " in text and ": 1 call, " in text and "call-1  6/10  loop@4" in text
    out = StringIO()
    call_command("conversation_judge", "run", "--dry-run", stdout=out)
    assert "-> 0 judge calls (1 cache hits)" in out.getvalue()
    with pytest.raises(CommandError, match="no such transcript nope"):
        call_command("conversation_judge", "run", "--transcript", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="no agent 'ghost'"):
        call_command("conversation_judge", "plan", "ghost", "a,b", stdout=StringIO())
