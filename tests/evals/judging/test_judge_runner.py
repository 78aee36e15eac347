"""The judge runner against a local chat-completions server (tests/evals/judge_server.py)."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evals.judging.models import (
    Judge,
    JudgeCacheEntry,
    JudgeRun,
    JudgeRunItem,
    Verdict,
    VerdictCount,
)
from evals.judging.prompt import PROMPT_VERSION
from evals.judging.selectors.runs import judge_run_needs_model, judge_run_summary
from evals.judging.services.counts import verdict_counts_differences
from evals.judging.services.runs import JudgeRunInvalid, judge_run_create
from evals.rules.models import RuleVersion
from evals.rules.services import rule_version_create
from tests.evals.judge_helpers import make_call

pytestmark = pytest.mark.django_db


def run_judge(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_create(**kwargs)
    run.refresh_from_db()
    return run


def user_message(req):
    return next(m for m in req["body"]["messages"] if m["role"] == "user")["content"]


def request_for(fake, rule_id):
    found = [r for r in fake.requests if f"- {rule_id} " in user_message(r)]
    assert len(found) == 1, f"{len(found)} requests grade {rule_id}"
    return found[0]


def test_one_call_per_group_with_its_rules_and_schema(
    fake_judge, rules, django_capture_on_commit_callbacks
):
    make_call()
    fake_judge.flag = {"asking.one-question": [2]}
    run = run_judge(django_capture_on_commit_callbacks)

    # Groups: opening (whole call), opening@opening phase, asking, boundaries; the detector is free.
    assert len(fake_judge.requests) == 4
    assert run.calls_made == 4 and run.tasks_total == 5 and run.tasks_done == 5
    assert run.status == JudgeRun.Status.DONE and run.finished_at is not None
    assert run.cache_hits == 0 and run.errors == 0 and run.tokens_in > 0 and run.tokens_out > 0
    assert run.cost > 0  # gpt-4o-mini has a price in settings
    asking = request_for(fake_judge, "asking.one-question")
    body = asking["body"]
    assert asking["path"] == "/v1/chat/completions"
    assert asking["headers"]["authorization"] == "Bearer test-key"
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["asking.one-question"]
    verdict_props = list(schema["properties"]["asking.one-question"]["properties"])
    assert verdict_props.index("reason") < verdict_props.index("flagged")
    # Only agent turns can be cited; the prompt says to grade only the agent.
    assert schema["properties"]["asking.one-question"]["properties"]["turns"]["items"]["enum"] == [
        0,
        2,
        4,
        5,
    ]
    system = body["messages"][0]["content"]
    assert "ONLY the agent's turns" in system and "never grade them" in system
    text = user_message(asking)
    assert "Ask one question per turn." in text
    assert "opening.greet-by-name" not in text and "boundaries.no-rubric-leak" not in text
    assert "[2] AGENT: What is your current role?" in text and "[3] USER: Backend engineer." in text


def test_phase_rules_see_only_their_phase(fake_judge, rules, django_capture_on_commit_callbacks):
    make_call()
    run_judge(django_capture_on_commit_callbacks)
    phased = request_for(fake_judge, "opening.greet-by-name")
    text = user_message(phased)
    assert "[0] AGENT" in text and "[1] USER" in text
    assert "[2]" not in text and "[5]" not in text
    assert "'opening' phase" in text
    enum = phased["body"]["response_format"]["json_schema"]["schema"]["properties"][
        "opening.greet-by-name"
    ]
    assert enum["properties"]["turns"]["items"]["enum"] == [0]
    # The whole-call rule of the same group is a separate call that sees every turn.
    assert "[5] AGENT" in user_message(request_for(fake_judge, "opening.introduce"))


def test_answers_become_verdicts(fake_judge, rules, django_capture_on_commit_callbacks):
    call = make_call()
    fake_judge.flag = {"asking.one-question": [2, 2]}
    run = run_judge(django_capture_on_commit_callbacks)
    judge = Judge.objects.get(name=f"gpt-4o-mini/{PROMPT_VERSION}")
    assert judge.kind == Judge.Kind.LLM and run.judge == judge
    v = Verdict.objects.get(transcript=call, rule_version=rules["one-q"], judge=judge)
    assert (
        v.flagged
        and v.turn == 2
        and v.turns == [2]
        and v.severity == "major"
        and v.confidence == 90
    )
    assert v.rationale == "Checked asking.one-question." and v.error == "" and v.judge_run == run
    fine = Verdict.objects.get(transcript=call, rule_version=rules["leak"], judge=judge)
    assert not fine.flagged and fine.turn is None and fine.turns == [] and fine.severity == ""
    det = Verdict.objects.get(transcript=call, rule_version=rules["det"])
    assert det.judge.name == "detector/multiple_questions" and det.judge.kind == Judge.Kind.DETECTOR
    assert (
        det.flagged
        and det.turns == [2]
        and det.severity == "minor"
        and "turn 2 asks 2" in det.rationale
    )
    # One verdict per (transcript, rule version, judge): 4 LLM rules + 1 detector.
    assert Verdict.objects.filter(transcript=call).count() == 5


def test_rerun_unchanged_makes_no_calls_and_a_new_version_reruns_one_group(
    fake_judge, rules, django_capture_on_commit_callbacks
):
    call = make_call()
    run_judge(django_capture_on_commit_callbacks)
    assert len(fake_judge.requests) == 4 and JudgeCacheEntry.objects.count() == 4

    second = run_judge(django_capture_on_commit_callbacks)
    assert len(fake_judge.requests) == 4
    assert (
        second.calls_made == 0 and second.cache_hits == 4 and second.status == JudgeRun.Status.DONE
    )
    assert Verdict.objects.filter(transcript=call).count() == 5

    v2 = RuleVersion.objects.create(
        rule=rules["one-q"].rule, number=2, text="Ask exactly one question a turn."
    )
    third = run_judge(django_capture_on_commit_callbacks)
    assert len(fake_judge.requests) == 5 and third.calls_made == 1 and third.cache_hits == 3
    text = user_message(fake_judge.requests[-1])
    assert "Ask exactly one question a turn." in text and "Ask one question per turn." not in text
    assert Verdict.objects.filter(transcript=call, rule_version=v2).count() == 1


def test_cost_cap_stops_the_run(fake_judge, rules, settings, django_capture_on_commit_callbacks):
    settings.JUDGE_PRICES = {
        "gpt-4o-mini": (1.0, 1.0)
    }  # a dollar per 1k tokens: the first call spends the cap
    make_call("call-1")
    make_call("call-2")
    run = run_judge(
        django_capture_on_commit_callbacks, rule_ids=["asking.*"], cost_cap=Decimal("0.01")
    )
    assert run.status == JudgeRun.Status.STOPPED
    assert "Cost cap reached" in run.stop_reason
    assert (
        run.calls_made == 1
        and len(fake_judge.requests) == 1
        and run.tasks_done == run.tasks_total == 2
    )
    assert run.items.filter(outcome=JudgeRunItem.Outcome.SKIPPED).count() == 1
    assert Verdict.objects.count() == 1


def test_malformed_answer_is_an_errored_verdict_per_rule_of_the_group(
    fake_judge, rules, django_capture_on_commit_callbacks
):
    call = make_call()
    fake_judge.mode, fake_judge.only_for = "malformed", "asking.one-question"
    run = run_judge(django_capture_on_commit_callbacks)
    assert run.status == JudgeRun.Status.DONE and run.errors == 1 and run.calls_made == 4
    bad = Verdict.objects.get(transcript=call, rule_version=rules["one-q"])
    assert bad.error.startswith("answer is not JSON") and not bad.flagged and bad.turn is None
    item = run.items.get(group="asking")
    assert item.outcome == JudgeRunItem.Outcome.ERROR and item.error == bad.error
    assert Verdict.objects.filter(transcript=call).exclude(error="").count() == 1
    assert not JudgeCacheEntry.objects.filter(answer__has_key="asking.one-question").exists()
    # The workers folded the verdict counts' deltas after their items: one row per key.
    keys = list(VerdictCount.objects.values_list("rule_version", "judge", "agent_version"))
    assert len(keys) == len(set(keys)) == 5 and verdict_counts_differences() == 0

    # The error is not cached: fixed server, rerun -> one call, the errored verdict replaced.
    fake_judge.mode = ""
    rerun = run_judge(django_capture_on_commit_callbacks)
    assert rerun.calls_made == 1 and rerun.cache_hits == 3
    bad.refresh_from_db()
    assert bad.error == "" and bad.judge_run == rerun
    assert verdict_counts_differences() == 0  # the counts followed the re-run's update


@pytest.mark.parametrize(
    "mode, message",
    [
        ("missing-rule", "answer does not match the schema at answer: fails 'required'"),
        ("user-turn", "fails 'enum'"),
        ("error500", "server answered HTTP 500"),
    ],
)
def test_invalid_answers_and_server_errors_are_errored(
    fake_judge, rules, mode, message, django_capture_on_commit_callbacks
):
    call = make_call()
    fake_judge.mode = mode
    run = run_judge(django_capture_on_commit_callbacks, rule_ids=["opening.*"])
    assert run.status == JudgeRun.Status.DONE and run.errors == 2
    for key in ("greet", "intro"):
        v = Verdict.objects.get(transcript=call, rule_version=rules[key])
        assert message in v.error
        assert "SECRET-USER-WORDS" not in v.error


def test_timeout_is_an_errored_verdict_and_the_run_goes_on(
    fake_judge, rules, settings, django_capture_on_commit_callbacks
):
    settings.JUDGE_TIMEOUT_S = 0.3
    settings.JUDGE_MAX_RETRIES = 1
    fake_judge.mode, fake_judge.only_for, fake_judge.slow_s = (
        "slow",
        "boundaries.no-rubric-leak",
        1.0,
    )
    call = make_call()
    run = run_judge(django_capture_on_commit_callbacks)
    assert run.status == JudgeRun.Status.DONE and run.errors == 1
    v = Verdict.objects.get(transcript=call, rule_version=rules["leak"])
    assert v.error == "timed out after 0.3 s and 1 retries"
    # The client retried once: two requests for the slow group.
    assert sum("boundaries.no-rubric-leak" in user_message(r) for r in fake_judge.requests) == 2
    assert Verdict.objects.filter(transcript=call, error="").count() == 4


def test_dry_run_spends_nothing(fake_judge, rules, capsys):
    make_call("call-1")
    make_call("call-2")
    out = StringIO()
    call_command("judge", "--dry-run", stdout=out)
    text = out.getvalue()
    assert "8 judge calls" in text and "0 cache hits" in text and "2 detector checks" in text
    assert "estimated cost $0.00" in text
    assert fake_judge.requests == [] and JudgeRun.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_command_runs_and_prints_the_summary(fake_judge, rules):
    call = make_call("call-1")
    out = StringIO()
    call_command(
        "judge", "--transcript", "call-1", "--rule", "asking.*", "--rule", "signals.*", stdout=out
    )
    text = out.getvalue()
    assert "done" in text and "1 call" in text and "errors 0" in text
    assert Verdict.objects.filter(transcript=call).count() == 2


@pytest.mark.django_db(transaction=True)
def test_detectors_only_needs_no_server(rules, settings):
    settings.JUDGE_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens: a call would fail
    call = make_call()
    out = StringIO()
    call_command("judge", "--detectors-only", stdout=out)
    assert "0 calls" in out.getvalue()
    assert Verdict.objects.filter(transcript=call).count() == 1
    assert JudgeRun.objects.get().calls_made == 0


def test_filters_that_match_nothing_are_refused(rules, settings):
    settings.JUDGE_BASE_URL = "http://127.0.0.1:9/v1"  # a judge is configured: a dry run calls none
    make_call()
    with pytest.raises(JudgeRunInvalid, match="rule: no active rule matches 'nope.*'"):
        judge_run_create(rule_ids=["nope.*"])
    with pytest.raises(JudgeRunInvalid, match="transcript: no such transcript call-404"):
        judge_run_create(transcript_ids=["call-404"])
    with pytest.raises(CommandError, match="agent version: no agent version 'v9'"):
        call_command("judge", "--agent-version", "v9", stdout=StringIO())
    with pytest.raises(
        CommandError, match="agent version: no agent version 'other-agent:2026-11-28.1'"
    ):
        call_command("judge", "--agent-version", "other-agent:2026-11-28.1", stdout=StringIO())
    plan = judge_run_create(agent_version="phone-screen:2026-11-28.1", dry_run=True)
    assert plan.transcripts == 1 and plan.calls == 4
    assert JudgeRun.objects.count() == 0


def test_an_item_that_crashes_is_recorded_and_the_run_finishes(
    fake_judge, rules, monkeypatch, django_capture_on_commit_callbacks
):
    call = make_call()

    def broken(spec, turns, context=None):
        raise RuntimeError("detector bug")

    monkeypatch.setattr("evals.judging.services.runs.detector_run", broken)
    run = run_judge(django_capture_on_commit_callbacks)
    assert run.status == JudgeRun.Status.DONE and run.tasks_done == run.tasks_total == 5
    assert run.calls_made == 4 and run.errors == 1
    det = Verdict.objects.get(transcript=call, rule_version=rules["det"])
    assert (
        det.error == "internal error: RuntimeError"
        and det.judge.name == "detector/multiple_questions"
    )


@pytest.mark.django_db(transaction=True)
def test_command_resumes_a_stuck_run(rules):
    call = make_call()
    run = JudgeRun.objects.create(
        status=JudgeRun.Status.RUNNING, tasks_total=1, params={"cost_cap": "0"}
    )
    JudgeRunItem.objects.create(
        run=run, transcript=call, kind="detectors", rule_version_ids=[rules["det"].pk]
    )
    out = StringIO()
    call_command("judge", "--resume", str(run.pk), stdout=out)
    assert (
        "1 pending checks queued again" in out.getvalue()
        and f"Judge run {run.pk} done" in out.getvalue()
    )
    with pytest.raises(CommandError, match="resume: no judge run 999"):
        call_command("judge", "--resume", "999", stdout=StringIO())


def test_a_server_without_usage_still_counts_tokens_and_cost(
    fake_judge, rules, django_capture_on_commit_callbacks
):
    make_call()
    fake_judge.mode = "no-usage"
    run = run_judge(django_capture_on_commit_callbacks, rule_ids=["asking.*"])
    prompt_chars = sum(len(m["content"]) for m in fake_judge.requests[0]["body"]["messages"])
    assert (
        run.errors == 0
        and run.tokens_in == round(prompt_chars / 4)
        and run.tokens_out > 0
        and run.cost > 0
    )


@pytest.mark.parametrize("fmt", ["json_object", "none"])
def test_servers_that_reject_json_schema_get_the_schema_in_the_prompt(
    fake_judge, rules, settings, fmt, django_capture_on_commit_callbacks
):
    settings.JUDGE_RESPONSE_FORMAT = fmt
    call = make_call()
    fake_judge.flag = {"asking.one-question": [2]}
    run = run_judge(django_capture_on_commit_callbacks, rule_ids=["asking.*"])
    body = fake_judge.requests[0]["body"]
    assert body.get("response_format") == (
        {"type": "json_object"} if fmt == "json_object" else None
    )
    assert '"required":["asking.one-question"]' in body["messages"][-1]["content"]
    assert (
        run.errors == 0
        and Verdict.objects.get(transcript=call, rule_version=rules["one-q"]).flagged
    )


def test_a_run_that_needs_the_llm_is_refused_when_no_judge_is_configured(
    rules, settings, django_capture_on_commit_callbacks
):
    settings.JUDGE_BASE_URL = ""
    settings.JUDGE_API_KEY = ""
    make_call()
    with pytest.raises(
        JudgeRunInvalid, match="no LLM judge is configured, and this run needs 1 judge calls"
    ):
        judge_run_create(rule_ids=["asking.*"])
    with pytest.raises(CommandError, match="set JUDGE_BASE_URL"):
        call_command("judge", "--rule", "asking.*", "--rule", "opening.*", stdout=StringIO())
    assert JudgeRun.objects.count() == 0
    # With a detector rule in it the run goes ahead for what needs no model, and says what it
    # skipped and why: no verdict for those, none errored.
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("judge", stdout=out)
    run = JudgeRun.objects.get()
    assert run.status == JudgeRun.Status.DONE and run.errors == 0
    assert judge_run_summary(run)["needs_model"] == 4
    assert "4 checks skipped: they need a model" in out.getvalue()
    assert "opening@opening (opening.greet-by-name v1) on 1 call: needs a model" in out.getvalue()
    assert not Verdict.objects.filter(rule_version__rule__detector__isnull=True).exists()
    assert judge_run_create(detectors_only=True).tasks_total == 1


def test_without_a_judge_cached_answers_still_judge_and_the_rest_needs_a_model(
    fake_judge, rules, settings, django_capture_on_commit_callbacks
):
    """A run answers from the cache at no cost when no judge is configured; a group whose rule
    versions were never answered (a rule edited since) is skipped as "needs a model"."""
    call = make_call()
    first = run_judge(django_capture_on_commit_callbacks)
    assert first.calls_made == 4
    Verdict.objects.exclude(rule_version__rule__detector__isnull=False).delete()
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    rule_version_create(rule=rules["one-q"].rule, text="Ask one question per turn, no more.")
    requests = len(fake_judge.requests)
    run = run_judge(django_capture_on_commit_callbacks)
    summary = judge_run_summary(run)
    assert (run.status, run.calls_made, run.cache_hits, run.cost, run.errors) == (
        JudgeRun.Status.DONE,
        0,
        3,
        Decimal(0),
        0,
    )
    assert len(fake_judge.requests) == requests and summary["needs_model"] == 1
    # The cached groups' verdicts are back, by the same judge; the edited rule has none.
    assert Verdict.objects.filter(judge_run=run, judge=first.judge).count() == 3
    assert not Verdict.objects.filter(transcript=call, rule_version__rule=rules["one-q"].rule)
    (group,) = judge_run_needs_model(run)
    assert (group["group"], group["rules"], group["calls"]) == (
        "asking",
        ["asking.one-question v2"],
        1,
    )
