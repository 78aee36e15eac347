"""The sweep (console.services.runs_recover, `manage.py recover_runs`): work a dead worker left
is finished by a live one, never paid twice, or ended with its reason. Each test leaves the rows
as a worker killed mid-work leaves them (tests/evals/judging/test_judge_worker_killed.py kills a
real one)."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from console.services import runs_recover
from evals.catalog.selectors import agent_version_resolve
from evals.evalruns.models import EvalRun, EvalRunRow
from evals.evalruns.services import eval_run_create, eval_run_execute
from evals.gating import services as gating
from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from evals.judging.services.runs import (
    judge_items_enqueue,
    judge_run_create,
    judge_run_item_execute,
    judge_runs_recover,
)
from evals.webhooks.models import Webhook, WebhookDelivery
from tests.evals.evalrun_helpers import ROWS, make_dataset, make_version
from tests.evals.judge_helpers import make_call
from tests.evals.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db


def _ago(minutes: float):
    return timezone.now() - timedelta(minutes=minutes)


@pytest.fixture
def lease(settings):
    settings.DOCKET_RUN_LEASE_S = 60
    settings.DOCKET_RUN_MAX_RECOVERIES = 3


def test_an_eval_run_left_running_is_resumed_from_its_pending_rows(fake_chat, lease):
    ds, version = make_dataset(rows=ROWS[:3]), make_version()
    run = eval_run_create(dataset=ds, agent_version=version, rubric="tool_selection")
    # A worker scored the first row and died: the run says running, 1 of 3, and nothing renews it.
    first = run.rows.order_by("position").first()
    EvalRunRow.objects.filter(pk=first.pk).update(
        outcome=EvalRunRow.Outcome.SCORED, score=78, passed=True, reason="stored before the kill"
    )
    EvalRun.objects.filter(pk=run.pk).update(
        status=EvalRun.Status.RUNNING, rows_done=1, started_at=_ago(10), heartbeat_at=_ago(5)
    )
    # Before: the task handed back by the broker claims only pending runs, so it stays at 33%.
    assert eval_run_execute(run_id=run.pk).rows_done == 1
    assert EvalRun.objects.get(pk=run.pk).status == EvalRun.Status.RUNNING

    assert runs_recover().eval_runs == 1
    run.refresh_from_db()
    assert run.status == EvalRun.Status.DONE and run.rows_done == 3 and run.rows_scored == 3
    assert run.recoveries == 1 and run.started_at < _ago(9)  # its first start is kept
    # The stored row is not paid again: the agent and the judge hear about the two others only.
    assert len(fake_chat.agent_requests()) == 2 and len(fake_chat.judge_requests()) == 2
    assert run.rows.get(pk=first.pk).reason == "stored before the kill"
    # A live run (renewed lease) is left alone.
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.RUNNING, heartbeat_at=_ago(0))
    assert runs_recover().eval_runs == 0


def test_an_eval_run_whose_worker_keeps_dying_ends_as_failed_with_the_reason(fake_chat, lease):
    ds, version = make_dataset(rows=ROWS[:2]), make_version()
    run = eval_run_create(dataset=ds, agent_version=version, rubric="tool_selection")
    EvalRun.objects.filter(pk=run.pk).update(
        status=EvalRun.Status.RUNNING, heartbeat_at=_ago(5), recoveries=3
    )
    assert runs_recover().eval_runs_failed == 1
    run.refresh_from_db()
    assert run.status == EvalRun.Status.FAILED and "3 recoveries" in run.stop_reason
    assert not fake_chat.requests


def _judge_run_killed(settings, *, finished_ago: float):
    """A judge run of 2 calls x 5 checks whose worker died holding 2 checks (claimed, lease
    expired) after finishing the 8 others."""
    make_call("call-1")
    make_call("call-2")
    run = judge_run_create(started_by="ci")  # queued at a commit that never comes: not run
    items = list(run.items.order_by("pk"))
    for item in items[:8]:
        judge_run_item_execute(item_id=item.pk)
    JudgeRunItem.objects.filter(pk__in=[i.pk for i in items[:8]]).update(
        heartbeat_at=_ago(finished_ago + 0.5), finished_at=_ago(finished_ago)
    )
    JudgeRunItem.objects.filter(pk__in=[i.pk for i in items[8:]]).update(heartbeat_at=_ago(5))
    JudgeRun.objects.filter(pk=run.pk).update(started_at=_ago(finished_ago + 1))
    return run, items


@pytest.mark.parametrize("broker", [True, False])
def test_a_judge_run_stuck_at_8_of_10_ends_with_each_call_paid_once(
    fake_judge, rules, lease, settings, broker
):
    # With a broker only the checks a dead worker held are queued again (the others are still in
    # the queue); without one (its thread died with the server) every pending check of a run
    # that has not moved for a lease.
    run, items = _judge_run_killed(settings, finished_ago=5)
    run.refresh_from_db()
    assert (run.tasks_done, run.tasks_total, run.status) == (8, 10, JudgeRun.Status.RUNNING)
    paid = len(fake_judge.requests)
    # A second delivery of a check still held by a live worker makes no call.
    JudgeRunItem.objects.filter(pk=items[8].pk).update(heartbeat_at=_ago(0))
    assert judge_run_item_execute(item_id=items[8].pk) == "held-elsewhere"
    JudgeRunItem.objects.filter(pk=items[8].pk).update(heartbeat_at=_ago(5))

    if broker:
        # What the sweep does with a broker, the tasks run here rather than on a worker.
        assert judge_items_enqueue(judge_runs_recover(eager=False)["requeue"]) == 2
    else:
        assert runs_recover().judge_checks == 2
    run.refresh_from_db()
    assert (run.tasks_done, run.status, run.recoveries) == (10, JudgeRun.Status.DONE, 1)
    llm = sum(1 for i in items[8:] if i.kind == JudgeRunItem.Kind.LLM)
    assert len(fake_judge.requests) == paid + llm and run.calls_made == 8
    assert Verdict.objects.filter(judge_run=run).count() == 10
    assert runs_recover().judge_checks == 0  # nothing left


def test_a_judge_run_whose_workers_keep_dying_ends_as_failed_with_the_reason(
    fake_judge, rules, lease, settings
):
    run, items = _judge_run_killed(settings, finished_ago=5)
    held = JudgeRunItem.objects.filter(pk__in=[i.pk for i in items[8:]])
    for attempt in range(3):
        assert len(judge_runs_recover(eager=False)["requeue"]) == 2
        held.update(heartbeat_at=_ago(5))  # a worker took them and died again, with no progress
    assert judge_runs_recover(eager=False) == {"requeue": [], "failed": [run.pk]}
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "3 recoveries in a row" in run.stop_reason
    assert run.tasks_done == 10 and not run.items.filter(outcome="pending").exists()


def test_a_gate_whose_judge_run_failed_cannot_run_exit_2(world, monkeypatch):
    # Before: it was decided on the verdicts it had, "no verdict for ...", fail (exit 1).
    from evals.gating.services import gate_runs

    run = JudgeRun.objects.create(
        status=JudgeRun.Status.FAILED,
        started_by="gate",
        stop_reason="Failed: its worker stopped and 3 recoveries in a row made no progress",
    )
    world.calls["2026-11-21.1-0"].verdicts.filter(rule_version=world.one_q).delete()
    monkeypatch.setattr(gate_runs, "judge_missing_start", lambda **kw: run)
    with pytest.raises(CommandError) as exit_:
        call_command("gate", gate="release", candidate="2026-11-21.1", stdout=StringIO())
    assert exit_.value.returncode == 2
    assert f"judge run #{run.pk} failed (Failed: its worker stopped" in str(exit_.value)
    gate_run = gating.gate_resolve("release").runs.get()
    assert gate_run.status == "error" and not gate_run.results.get("metrics")


def test_a_gate_run_whose_worker_died_is_taken_again_and_decided_once(world, lease):
    cand = agent_version_resolve("2026-11-21.1")
    run = gating.gate_run_start(gate=world.gate, candidate=cand, by="test")  # never queued
    assert run.status == "pending"
    from evals.gating.models import GateRun

    GateRun.objects.filter(pk=run.pk).update(created_at=_ago(5))
    assert runs_recover().gate_runs == 1
    run.refresh_from_db()
    assert run.status in ("pass", "fail") and run.recoveries == 1
    assert runs_recover().gate_runs == 0  # decided: left alone


def test_webhook_deliveries_a_restart_left_are_sent_by_the_sweep(settings, lease):
    settings.DOCKET_WEBHOOK_BACKOFF_S = 1
    settings.DOCKET_EGRESS_ALLOW_NETWORKS = ["127.0.0.1/32"]  # the test receiver's address only
    receiver = Receiver().start()
    try:
        hook = Webhook.objects.create(url=receiver.url, events=["gate_run.finished"], secret="s")
        left = [
            WebhookDelivery.objects.create(
                webhook=hook, uuid=f"00000000-0000-0000-0000-00000000000{i}", event="x", payload={}
            )
            for i in range(8)
        ]
        old = [{"at": _ago(5).isoformat(), "status": 500, "error": "HTTP 500", "ms": 3}]
        WebhookDelivery.objects.filter(pk__in=[d.pk for d in left]).update(created_at=_ago(10))
        WebhookDelivery.objects.filter(pk__in=[d.pk for d in left[4:]]).update(
            status=WebhookDelivery.Status.RETRYING, attempts=old
        )
        # One retried a moment ago is not due yet, and one new is the emitter's to send.
        WebhookDelivery.objects.filter(pk=left[7].pk).update(
            attempts=[{**old[0], "at": timezone.now().isoformat()}]
        )
        WebhookDelivery.objects.filter(pk=left[0].pk).update(created_at=timezone.now())

        out = StringIO()
        call_command("recover_runs", stdout=out)
        assert "deliveries=6" in out.getvalue()
        statuses = dict(WebhookDelivery.objects.values_list("pk", "status"))
        assert [statuses[d.pk] for d in left] == ["pending"] + ["delivered"] * 6 + ["retrying"]
        assert len(receiver.requests) == 6
    finally:
        receiver.stop()


def test_celery_beat_runs_the_sweep_every_interval(settings):
    from console.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["recover-runs"]
    assert entry["task"] in app.tasks and entry["schedule"] == settings.DOCKET_RECOVER_INTERVAL_S
    assert app.tasks[entry["task"]].apply().get() == runs_recover().as_dict()  # nothing to do
