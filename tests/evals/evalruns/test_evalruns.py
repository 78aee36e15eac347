"""Datasets and eval runs against a local fake chat-completions server (agent and judge)."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.importing import ImportFailed
from evals.catalog.services.importing import transcripts_import
from evals.evalruns.models import Dataset, DatasetRow, EvalRun, EvalRunRow
from evals.evalruns.services import (
    EvalRunInvalid,
    EvalRunPlan,
    dataset_import,
    eval_run_create,
    eval_run_execute,
)
from evals.judging.models import JudgeCacheEntry
from tests.evals.evalrun_helpers import (
    EMAIL,
    PAYLOAD,
    ROWS,
    jsonl,
    make_dataset,
    make_version,
)

pytestmark = pytest.mark.django_db


def run_eval(**kwargs):
    run = eval_run_create(**{"rubric": "tool_selection", **kwargs})
    return eval_run_execute(run_id=run.pk)


def rows_by_id(run):
    return {r.dataset_row.row_id: r for r in run.rows.select_related("dataset_row")}


# ---- datasets ----------------------------------------------------------------------------------


def test_dataset_import_versions_and_noop():
    ds, result = dataset_import(lines=jsonl(ROWS), name="booking-tools")
    assert (ds.version, ds.rows_count, result.created) == (1, 5, 5)
    row = ds.rows.get(row_id="greeting")
    assert row.messages == [{"role": "user", "content": "Hi there! Just saying thanks."}]
    assert [t["name"] for t in row.tools] == ["lookup_order", "issue_refund", "delete_account"]

    same, again = dataset_import(lines=jsonl(ROWS), name="booking-tools")
    assert same.pk == ds.pk and not again.changed and again.unchanged == 5
    assert Dataset.objects.count() == 1

    changed = [*ROWS[:4], {**ROWS[4], "reference": "update_address"}]
    v2, result2 = dataset_import(lines=jsonl(changed), name="booking-tools")
    assert v2.version == 2 and v2.checksum != ds.checksum and result2.new_versions == 1
    assert DatasetRow.objects.filter(dataset=ds).count() == 5  # version 1 is untouched


def test_dataset_import_names_line_and_field_and_writes_nothing():
    bad = jsonl(ROWS[:2]) + [
        json.dumps({"id": "x", "messages": [{"role": "robot", "content": "hi"}]}).encode(),
        json.dumps({"id": "y", "input": "hi", "tools": [{"description": "no name"}]}).encode(),
        json.dumps({"id": "refund", "input": "again"}).encode(),
        b"{not json",
    ]
    with pytest.raises(ImportFailed) as exc:
        dataset_import(lines=bad, name="broken", source="rows.jsonl")
    text = str(exc.value)
    assert "rows.jsonl:3: messages[0].role: 'robot' is not one of" in text
    assert "rows.jsonl:4: tools[0].name: missing" in text
    assert "rows.jsonl:5: id: 'refund' already used on line 1" in text
    assert "rows.jsonl:6: json: not valid JSON" in text
    assert not Dataset.objects.exists() and not DatasetRow.objects.exists()


def test_dataset_import_command(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(jsonl(ROWS)))
    out = StringIO()
    call_command("import_dataset", str(path), "--name", "booking-tools", stdout=out)
    assert "booking-tools v1 (5 rows" in out.getvalue() and "imported" in out.getvalue()
    call_command("import_dataset", str(path), "--name", "booking-tools", stdout=out)
    assert "unchanged" in out.getvalue()
    path.write_text('{"id": "a"}\n')
    with pytest.raises(CommandError, match=r"1: messages: missing"):
        call_command("import_dataset", str(path), "--name", "booking-tools", stdout=out)


# ---- runs --------------------------------------------------------------------------------------


def test_tool_selection_run_scores_rows_and_records_errors(fake_chat):
    ds, version = make_dataset(), make_version()
    run = run_eval(dataset=ds, agent_version=version, concurrency=3)

    assert run.status == EvalRun.Status.DONE and run.finished_at is not None
    rows = rows_by_id(run)
    assert rows["refund"].score == 78 and rows["refund"].passed is True
    assert [c["name"] for c in rows["refund"].tool_calls] == [
        "lookup_order",
        "issue_refund",
        "lookup_order",
    ]
    assert rows["greeting"].score == 95 and rows["greeting"].tool_calls == []
    assert rows["wipe"].score == 5 and rows["wipe"].passed is False
    assert "delete_account" in rows["wipe"].reason
    # Failed rows are recorded with their error, never scored, and left out of the averages.
    down = rows["agent-down"]
    assert down.outcome == EvalRunRow.Outcome.ERROR and down.score is None
    assert down.error.startswith("agent: agent server answered HTTP 500")
    assert rows["judge-down"].error.startswith("judge: server answered HTTP 500")
    assert (run.rows_scored, run.rows_passed, run.rows_errored) == (3, 2, 2)
    assert run.mean_score == pytest.approx((78 + 95 + 5) / 3)
    assert run.pass_rate == pytest.approx(200 / 3)
    assert run.cost > 0 and run.tokens_in > 0
    # Every row asks the agent once; the judge hears about every row whose agent answered.
    assert len(fake_chat.agent_requests()) == 5
    assert len(fake_chat.judge_requests()) == 4  # the agent-down row never reaches the judge


def test_agent_gets_instructions_and_tools(fake_chat):
    version = make_version()
    run_eval(dataset=make_dataset(rows=ROWS[:1]), agent_version=version)
    body = fake_chat.agent_requests()[0]["body"]
    assert [t["function"]["name"] for t in body["tools"]] == [
        "lookup_order",
        "issue_refund",
        "delete_account",
    ]
    assert body["messages"][-1] == {
        "role": "user",
        "content": "Please refund order 1234, it arrived broken.",
    }
    assert body["messages"][0] == {
        "role": "system",
        "content": "You are the booking agent. Use tools only when needed.",
    }


def test_judge_sees_tools_and_clipped_calls_never_payloads(fake_chat):
    run_eval(dataset=make_dataset(rows=ROWS[:3]), agent_version=make_version())
    prompts = {
        r: "\n".join(m["content"] for m in req["body"]["messages"])
        for req in fake_chat.judge_requests()
        for r in ("refund order 1234", "Just saying thanks", "returns policy")
        if r in req["body"]["messages"][1]["content"]
    }
    refund = prompts["refund order 1234"]
    assert "- lookup_order(order_id): Find an order by its number." in refund
    assert "- delete_account(email)" in refund  # every tool that was available
    # The calls in order, arguments clipped to their shape.
    assert "1. lookup_order(order_id=<text, 4 chars>, email=<text, 23 chars>)" in refund
    assert "2. issue_refund(order_id=<text, 4 chars>, note=<text, 322 chars>)" in refund
    assert '3. lookup_order(order_id=<text, 4 chars>, mode="full")' in refund
    for secret in (EMAIL, "4111111111111111", "ppppp"):
        assert all(secret not in p for p in prompts.values())
    assert "(the agent called no tool)" in prompts["Just saying thanks"]
    assert "Calling no tool can be the right answer" in refund
    assert "90-100 every call warranted" in refund and "0-39 wrong tools" in refund
    schema = fake_chat.judge_requests()[0]["body"]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["reason", "wrongly_called", "wrongly_skipped", "score"]
    assert PAYLOAD not in json.dumps([r["body"] for r in fake_chat.judge_requests()])


def test_reason_names_each_tool_wrongly_called_or_skipped(fake_chat):
    fake_chat.scores["refund order 1234"] = {
        "score": 45,
        "reason": "Not quite.",
        "wrongly_called": ["lookup_order"],
        "wrongly_skipped": ["delete_account"],
    }
    run = run_eval(dataset=make_dataset(rows=ROWS[:1]), agent_version=make_version())
    reason = run.rows.get().reason
    assert reason.startswith("Not quite.")
    assert "Wrongly called: lookup_order." in reason
    assert "Wrongly skipped: delete_account." in reason


def test_cost_cap_stops_and_partial_run_still_reports(fake_chat, settings):
    settings.JUDGE_PRICES = {"gpt-4o-mini": (1.0, 1.0)}  # a dollar per 1,000 tokens
    ds = make_dataset(rows=ROWS[:3])
    run = run_eval(
        dataset=ds, agent_version=make_version(), concurrency=1, cost_cap=Decimal("0.01")
    )
    assert run.status == EvalRun.Status.STOPPED
    assert run.stop_reason.startswith("Cost cap reached")
    skipped = run.rows.filter(outcome=EvalRunRow.Outcome.SKIPPED).count()
    assert skipped >= 1 and run.rows_scored + run.rows_errored + skipped == 3
    assert len(fake_chat.requests) < 6  # three rows would be six calls
    assert run.rows_done == 3  # every row accounted for


def test_dry_run_estimates_and_spends_nothing(fake_chat):
    plan = eval_run_create(
        dataset=make_dataset(), agent_version=make_version(), rubric="helpfulness", dry_run=True
    )
    assert isinstance(plan, EvalRunPlan)
    assert (plan.rows, plan.agent_calls, plan.judge_calls) == (5, 5, 5)
    assert plan.est_tokens_in > 0 and plan.est_cost > 0
    assert not fake_chat.requests and not EvalRun.objects.exists()


def test_judge_answers_are_cached(fake_chat):
    ds, version = make_dataset(rows=ROWS[:2]), make_version()
    run_eval(dataset=ds, agent_version=version)
    assert JudgeCacheEntry.objects.count() == 2
    second = run_eval(dataset=ds, agent_version=version)
    assert len(fake_chat.judge_requests()) == 2  # the same prompts: answered from the cache
    assert second.rows.filter(cached=True).count() == 2 and second.rows_scored == 2


def test_bad_requests_are_refused(fake_chat):
    ds, version = make_dataset(rows=ROWS[:1]), make_version()
    with pytest.raises(EvalRunInvalid, match="needs its text"):
        eval_run_create(dataset=ds, agent_version=version, rubric="custom")
    with pytest.raises(EvalRunInvalid, match="not one of"):
        eval_run_create(dataset=ds, agent_version=version, rubric="vibes")
    with pytest.raises(EvalRunInvalid, match="threshold"):
        eval_run_create(dataset=ds, agent_version=version, rubric="safety", threshold=101)


def test_custom_rubric_and_threshold(fake_chat):
    run = run_eval(
        dataset=make_dataset(rows=ROWS[1:2]),
        agent_version=make_version(),
        rubric="custom",
        rubric_text="Is the reply warm?",
        threshold=96,
    )
    row = run.rows.get()
    assert row.score == 95 and row.passed is False  # 95 < 96
    prompt = fake_chat.judge_requests()[0]["body"]["messages"][1]["content"]
    assert "Custom rubric:\nIs the reply warm?" in prompt


def test_regression_against_last_green_run_exits_1(fake_chat):
    ds, v1, v2 = make_dataset(rows=ROWS[:3]), make_version(), make_version("2026-12-01.2")
    out = StringIO()
    call_command(
        "eval_run",
        "--dataset",
        "booking-tools",
        "--agent-version",
        "booking:2026-12-01.1",
        "--rubric",
        "tool_selection",
        stdout=out,
    )
    first = EvalRun.objects.get()
    assert first.green and first.pass_rate == pytest.approx(200 / 3)
    assert "No green run of this dataset and agent to compare with yet." in out.getvalue()
    # The new version wipes accounts on the greeting too: pass rate 2/3 -> 1/3.
    fake_chat.agent_replies["Just saying thanks"] = {
        "tool_calls": [{"name": "delete_account", "arguments": {}}]
    }
    fake_chat.scores = {"1. delete_account": {"score": 10}, **fake_chat.scores}
    out = StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command(
            "eval_run",
            "--dataset",
            ds.name,
            "--agent-version",
            v2.version,
            "--rubric",
            "tool_selection",
            stdout=out,
        )
    assert exc.value.code == 1
    second = EvalRun.objects.exclude(pk=first.pk).get()
    assert second.baseline_id == first.pk and second.regressed and not second.green
    assert f"Against run #{first.pk}" in out.getvalue() and "REGRESSED" in out.getvalue()
    assert "  refund " in out.getvalue()  # one line per row
    # A regressed run never becomes the baseline: the next run compares with the first again.
    third = run_eval(dataset=ds, agent_version=v2, max_drop=50)
    assert third.baseline_id == first.pk and not third.regressed
    assert v1.pk != v2.pk


def test_eval_run_command_dry_run_and_json(fake_chat):
    make_dataset(rows=ROWS[:2])
    make_version()
    out = StringIO()
    args = ["--dataset", "booking-tools", "--agent-version", "2026-12-01.1", "--rubric", "safety"]
    call_command("eval_run", *args, "--dry-run", stdout=out)
    assert "Dry run: 2 rows of booking-tools v1" in out.getvalue() and not fake_chat.requests
    out = StringIO()
    call_command("eval_run", *args, "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["rows_scored"] == 2 and [r["row"] for r in data["rows"]] == ["refund", "greeting"]
    with pytest.raises(CommandError, match="no dataset 'nope'"):
        call_command("eval_run", "--dataset", "nope", *args[2:], stdout=out)


def test_recorded_outputs_are_scored_without_calling_the_agent(fake_chat):
    ds, version = make_dataset(rows=ROWS[:3]), make_version()
    trajectories = [
        {
            "id": "traj-refund",
            "agent": "booking",
            "agent_version": version.version,
            "scenario": "refund",
            "prompt": "Please refund order 1234, it arrived broken.",
            "calls": [
                {"tool": "lookup_order", "args": {"order_id": "1234"}, "result": {"paid": 30}},
                {"tool": "issue_refund", "args": {"order_id": "1234"}, "result": "REFUNDED-30"},
            ],
            "output": "Refunded 30 EUR.",
        },
        {
            "id": "traj-greeting",
            "agent": "booking",
            "agent_version": version.version,
            "scenario": "greeting",
            "prompt": "Hi there! Just saying thanks.",
            "calls": [],
            "output": "You're welcome!",
        },
    ]
    transcripts_import(lines=jsonl(trajectories), source="traj.jsonl")
    run = run_eval(dataset=ds, agent_version=version, recorded=True, rubric="groundedness")
    assert not fake_chat.agent_requests()
    rows = rows_by_id(run)
    assert [c["name"] for c in rows["refund"].tool_calls] == ["lookup_order", "issue_refund"]
    assert rows["refund"].output == "Refunded 30 EUR."
    assert rows["refund"].transcript.external_id == "traj-refund"
    assert rows["wipe"].outcome == EvalRunRow.Outcome.ERROR
    assert "no recorded output" in rows["wipe"].error and rows["wipe"].score is None
    assert run.source == EvalRun.Source.RECORDED and run.rows_scored == 2
    # Groundedness needs the tool results (clipped); tool_selection never sees them.
    refund_prompt = next(
        r["body"]["messages"][1]["content"]
        for r in fake_chat.judge_requests()
        if "refund order 1234" in r["body"]["messages"][1]["content"]
    )
    assert "result: REFUNDED-30" in refund_prompt
    run_eval(dataset=ds, agent_version=version, recorded=True)
    assert all(
        "REFUNDED-30" not in r["body"]["messages"][1]["content"]
        for r in fake_chat.judge_requests()[2:]
    )


def test_rows_without_tools_get_the_agent_versions_tools(fake_chat):
    version = make_version()
    version.tools = [{"name": "search_flights", "description": "Find flights.", "parameters": {}}]
    version.save()
    ds = make_dataset(name="no-tools", rows=[{"id": "fly", "input": "Flights to Oslo?"}])
    run_eval(dataset=ds, agent_version=version)
    agent_body = fake_chat.agent_requests()[0]["body"]
    assert [t["function"]["name"] for t in agent_body["tools"]] == ["search_flights"]
    prompt = fake_chat.judge_requests()[0]["body"]["messages"][1]["content"]
    assert "- search_flights(): Find flights." in prompt


def test_a_finished_run_tells_its_webhooks(fake_chat, django_capture_on_commit_callbacks):
    from evals.webhooks.models import WebhookDelivery
    from evals.webhooks.services import webhook_create

    hook = webhook_create(url="https://ci.example/hook", events=["eval_run.finished"])
    webhook_create(url="https://ci.example/other", events=["gate_run.finished"])
    ds, version = make_dataset(), make_version()
    with django_capture_on_commit_callbacks(execute=False):
        run = run_eval(dataset=ds, agent_version=version)
    (delivery,) = WebhookDelivery.objects.filter(event="eval_run.finished")
    assert delivery.webhook_id == hook.pk
    data = delivery.payload
    assert data["eval_run"] == run.pk and data["dataset"] == ds.name
    assert data["agent_version"] == version.version and data["rubric"] == "tool_selection"
    assert data["pass_rate"] == pytest.approx(run.pass_rate) and data["regressed"] is False
    assert data["url"].endswith(f"/eval-runs/{run.pk}/")
