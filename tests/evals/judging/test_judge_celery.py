"""A judge run through a real Celery worker consuming
from the local Redis (db 3 unless told otherwise)."""

import os
import threading
import time
import uuid
from io import StringIO

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.core.management import call_command
from django.db import OperationalError, connection, connections

from console.celery import app
from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from evals.judging.services.runs import judge_run_create
from tests.evals.judge_helpers import make_call

REDIS_URL = os.environ.get("DOCKET_TEST_REDIS_URL", "redis://127.0.0.1:6379/3")

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def _redis_reachable() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


TASK_THREADS: list[int] = []
# One private queue per test process: Celery builds its queue table (`app.amqp.queues`) once, from
# the default queue of the first worker, so a second worker started under another name in the same
# process would consume a queue that no task is sent to.
QUEUE = f"docket-test-{uuid.uuid4().hex[:8]}"


def _close_thread_connections(**kwargs):
    TASK_THREADS.append(threading.get_ident())
    # The worker thread opens its own connections; close them so the test database can be dropped.
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block and conn.vendor != "sqlite":
            conn.close()


@pytest.fixture
def redis_worker(settings):
    """Point Celery at Redis, start an embedded worker
    on a private queue, restore eager mode after."""
    if not _redis_reachable():
        if os.environ.get("CI"):
            pytest.fail(f"Redis is not reachable at {REDIS_URL} and CI must run this test")
        pytest.skip(f"needs Redis at {REDIS_URL} (set DOCKET_TEST_REDIS_URL)")
    keys = ("broker_url", "task_always_eager", "task_default_queue", "result_backend")
    saved = {k: app.conf[k] for k in keys}
    queue = QUEUE
    app.conf.update(
        broker_url=REDIS_URL, task_always_eager=False, task_default_queue=queue, result_backend=None
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False
    # The producer pool may hold a connection made under the eager settings: start afresh.
    app._pool = None
    app.amqp._producer_pool = None
    task_postrun.connect(_close_thread_connections, weak=False)
    try:
        # On PostgreSQL four worker threads race on the run's counters; SQLite's shared-cache test
        # database locks whole tables, so there one thread does the work.
        pool, concurrency = ("threads", 4) if connection.vendor == "postgresql" else ("solo", 1)
        with start_worker(
            app,
            pool=pool,
            concurrency=concurrency,
            perform_ping_check=False,
            loglevel="WARNING",
            shutdown_timeout=20,
        ):
            yield app
    finally:
        task_postrun.disconnect(_close_thread_connections)
        app.conf.update(saved)
        app._pool = None
        app.amqp._producer_pool = None
        import redis

        redis.Redis.from_url(REDIS_URL).delete(queue)


def _wait_for(run_id: int, limit_s: float = 60) -> JudgeRun:
    deadline = time.monotonic() + limit_s
    run = None
    while time.monotonic() < deadline:
        try:
            run = JudgeRun.objects.get(pk=run_id)
        except OperationalError:
            # SQLite's shared-cache test database answers "table is locked" to a read that lands
            # while the worker thread writes (no busy timeout there): look again.
            run = None
        if run is not None and run.finished_at is not None:
            return run
        time.sleep(0.25)
    run = JudgeRun.objects.get(pk=run_id)
    raise AssertionError(
        f"judge run {run_id} did not finish within {limit_s} s: {run.tasks_done}/{run.tasks_total}"
    )


def test_a_judge_run_completes_on_a_real_worker(redis_worker, fake_judge, rules):
    TASK_THREADS.clear()
    call = make_call("call-1")
    make_call("call-2")
    fake_judge.flag = {"asking.one-question": [2]}
    run = judge_run_create(started_by="ci")
    run = _wait_for(run.pk)
    # Not eager: every task ran on a worker thread, none in this one.
    assert len(TASK_THREADS) == 10 and threading.get_ident() not in TASK_THREADS
    assert run.tokens_in == sum(i.tokens_in for i in run.items.all()) > 0  # no lost counter update
    assert run.status == JudgeRun.Status.DONE and run.tasks_done == run.tasks_total == 10
    assert run.calls_made == 8 and run.errors == 0 and len(fake_judge.requests) == 8
    assert not run.items.filter(outcome=JudgeRunItem.Outcome.PENDING).exists()
    assert Verdict.objects.filter(judge_run=run).count() == 10
    assert Verdict.objects.get(transcript=call, rule_version=rules["one-q"]).flagged

    # The command queues on the workers and waits for them; everything is cached now.
    out = StringIO()
    call_command("judge", stdout=out)
    assert "10 tasks queued on the workers" in out.getvalue()
    assert "0 calls, 8 cache hits" in out.getvalue()
    assert len(fake_judge.requests) == 8
