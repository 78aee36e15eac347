"""A real `celery -A console worker` process killed with SIGKILL in the middle of a judge run and of
an eval run: a new worker and the sweep finish each run, and nothing stored is paid twice
(PostgreSQL and Redis)."""

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection

from console.celery import app
from console.services import runs_recover
from evals.evalruns.models import EvalRun
from evals.evalruns.services import eval_run_create
from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from evals.judging.services.runs import judge_run_create, judge_runs_recover
from tests.evals.evalrun_helpers import ROWS, make_dataset, make_version
from tests.evals.judge_helpers import make_call
from tests.evals.judging.test_judge_celery import QUEUE

REDIS_URL = os.environ.get("DOCKET_TEST_REDIS_URL", "redis://127.0.0.1:6379/3")
ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 3

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def _redis():
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError:
        if os.environ.get("CI"):
            pytest.fail(f"Redis is not reachable at {REDIS_URL} and CI must run this test")
        pytest.skip(f"needs Redis at {REDIS_URL} (set DOCKET_TEST_REDIS_URL)")
    return client


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def workers(settings):
    """Return start(server): start a `celery -A console worker` process on a private queue of the
    test's Redis, against the test database, with `server` (the fake judge or chat server) as
    its judge and agent; this process's tasks go to that queue."""
    client = _redis()
    queue = QUEUE  # the process's one private queue (Celery builds its queue table once)
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": REDIS_URL,
        "DJANGO_SECRET_KEY": "test-worker-key",
        "JUDGE_MAX_RETRIES": "0",
        "JUDGE_TIMEOUT_S": "60",
        "JUDGE_COST_CAP_USD": "0",
        "DOCKET_RUN_LEASE_S": str(LEASE_S),
        "DOCKET_LOG_LEVEL": "WARNING",
    }
    started: list[subprocess.Popen] = []

    def start(server) -> subprocess.Popen:
        for prefix in ("JUDGE", "EVAL_AGENT"):
            env.update(
                {
                    f"{prefix}_BASE_URL": server.base_url,
                    f"{prefix}_API_KEY": "test-key",
                    f"{prefix}_MODEL": "gpt-4o-mini",
                }
            )
        cmd = [sys.executable, "-m", "celery", "-A", "console", "worker", "-Q", queue]
        cmd += ["-P", "threads", "-c", "2", "-l", "WARNING", "--without-mingle"]
        cmd += ["--without-gossip", "-n", f"{uuid.uuid4().hex[:8]}@%h"]
        started.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL))
        return started[-1]

    keys = ("broker_url", "task_always_eager", "task_default_queue", "result_backend")
    saved = {k: app.conf[k] for k in keys}
    app.conf.update(
        broker_url=REDIS_URL, task_always_eager=False, task_default_queue=queue, result_backend=None
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.DOCKET_RUN_LEASE_S = LEASE_S
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield start
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        app.conf.update(saved)
        app._pool = None
        app.amqp._producer_pool = None
        # The dead worker's unacknowledged messages too: nothing is left for a later test.
        client.delete(queue, "unacked", "unacked_index", "unacked_mutex")


def _until(check, what: str, limit_s: float = 90):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _prompt(request) -> str:
    return "\n".join(m["content"] for m in request["body"]["messages"])


def test_a_worker_killed_mid_run_is_replaced_and_each_check_is_paid_once(
    workers, fake_judge, rules
):
    make_call("call-1")
    make_call("call-2")
    fake_judge.gate.clear()  # every judge call hangs until the test lets it answer
    first = workers(fake_judge)
    run = judge_run_create(started_by="ci")  # 10 checks (8 judge calls, 2 detector checks)
    _until(lambda: len(fake_judge.requests) == 2, "the worker's two threads to call the judge")
    # Past the lease, a live worker still holds what it works on: nothing to recover.
    time.sleep(LEASE_S * 1.5)
    assert judge_runs_recover()["requeue"] == []

    first.send_signal(signal.SIGKILL)
    first.wait(10)
    lost = {_prompt(r) for r in fake_judge.requests}
    fake_judge.gate.set()  # the two answers go to a dead process: never received, never stored
    held = run.items.filter(outcome=JudgeRunItem.Outcome.PENDING, heartbeat_at__isnull=False)
    assert held.count() == 2

    workers(
        fake_judge
    )  # a new worker takes the checks still queued; the two the dead one held stay
    _until(lambda: JudgeRun.objects.get(pk=run.pk).tasks_done == 8, "the 8 checks still queued")
    time.sleep(1)
    run.refresh_from_db()
    assert (run.tasks_done, run.tasks_total, run.status) == (8, 10, JudgeRun.Status.RUNNING)

    assert runs_recover().judge_checks == 2
    _until(lambda: JudgeRun.objects.get(pk=run.pk).finished_at, "the run to finish")
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.tasks_done == 10 and run.errors == 0
    assert run.recoveries == 1 and not run.items.filter(outcome="pending").exists()
    # Each check paid once: 8 calls answered and counted; the 2 the dead worker had in flight were
    # made again (their answers never reached it), and nothing else was.
    assert run.calls_made == 8 and Verdict.objects.filter(judge_run=run).count() == 10
    # (The two calls have the same turns: each group's prompt is asked twice, once per call.)
    asked = Counter(_prompt(r) for r in fake_judge.requests)
    assert len(lost) == 2 and sorted(asked.values()) == [2, 2, 3, 3]
    assert {p for p, n in asked.items() if n == 3} == lost


def test_an_eval_run_whose_worker_is_killed_resumes_from_its_pending_rows(workers, fake_chat):
    ds, version = make_dataset(rows=ROWS[:3]), make_version()
    fake_chat.hold = "Just saying thanks"  # the second row's agent call hangs
    fake_chat.gate.clear()
    first = workers(fake_chat)
    run = eval_run_create(
        dataset=ds, agent_version=version, rubric="tool_selection", concurrency=1, background=True
    )
    _until(lambda: len(fake_chat.agent_requests()) == 2, "the second row's agent call")
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    fake_chat.gate.set()
    workers(fake_chat)
    time.sleep(LEASE_S * 1.5)
    # Before the sweep: running, 1 of 3 rows (33%), and the broker hands its task back only after
    # its visibility timeout (an hour); a new worker alone does not take it.
    run.refresh_from_db()
    assert (run.status, run.rows_done, run.rows_total) == (EvalRun.Status.RUNNING, 1, 3)

    assert runs_recover().eval_runs == 1
    _until(lambda: EvalRun.objects.get(pk=run.pk).finished_at, "the eval run to finish")
    run.refresh_from_db()
    assert run.status == EvalRun.Status.DONE and run.rows_scored == 3 and run.recoveries == 1
    # The row stored before the kill is not paid again; the one in flight is asked again.
    agent = Counter(_last_user(r) for r in fake_chat.agent_requests())
    assert sorted(agent.values()) == [1, 1, 2] and len(fake_chat.judge_requests()) == 3


def _last_user(request) -> str:
    return [m for m in request["body"]["messages"] if m["role"] == "user"][-1]["content"]
