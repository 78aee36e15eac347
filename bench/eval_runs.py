"""Benchmark: eval runs. Prints figures; asserts nothing about speed.

BENCH_ROWS tool_selection rows (default 60) scored against a local chat-completions server that
plays both the agent and the judge and answers each call after BENCH_LATENCY_S (default 0.2 s, a
model's latency): wall time at concurrency 1 and 5 (the default), then a rerun of the same
attempts (every judge answer a cache hit), and the dry-run estimate's time.

Uses a throwaway SQLite database in a temporary folder.
"""

import os
import tempfile
import time

from support import django_setup

ROWS = int(os.environ.get("BENCH_ROWS", "60"))
LATENCY = float(os.environ.get("BENCH_LATENCY_S", "0.2"))


def main() -> None:
    from tests.evals.evalrun_server import FakeChat

    fake = FakeChat().start()
    fake.delay_s = LATENCY
    os.environ.pop("DATABASE_URL", None)
    django_setup(
        DJANGO_DEBUG="1",
        DOCKET_VAR_DIR=tempfile.mkdtemp(prefix="docket-bench-evalruns-"),
        DOCKET_LOG_LEVEL="ERROR",
        JUDGE_BASE_URL=fake.base_url,
        EVAL_AGENT_BASE_URL=fake.base_url,
        JUDGE_MAX_RETRIES="0",
        EVAL_COST_CAP_USD="0",
        CELERY_BROKER_URL="",
    )
    import logging

    logging.disable(logging.INFO)
    from django.core.management import call_command

    from evals.catalog.models import Agent, AgentVersion
    from evals.evalruns.services import eval_run_create, eval_run_execute
    from tests.evals.evalrun_helpers import TOOLS, jsonl

    call_command("migrate", verbosity=0)
    from evals.evalruns.services import dataset_import

    rows = [
        {
            "id": f"row-{i}",
            "input": f"Please refund order {1000 + i}, it arrived broken.",
            "tools": TOOLS,
        }
        for i in range(ROWS)
    ]
    dataset, _ = dataset_import(lines=jsonl(rows), name="bench")
    version = AgentVersion.objects.create(agent=Agent.objects.create(name="bench"), version="v1")
    fake.agent_replies = {
        "refund": {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "1"}}]}
    }
    print(f"eval runs: {ROWS} tool_selection rows, agent and judge answering after {LATENCY:g} s")

    start = time.perf_counter()
    plan = eval_run_create(
        dataset=dataset, agent_version=version, rubric="tool_selection", dry_run=True
    )
    print(
        f"  dry run: {plan.agent_calls + plan.judge_calls} calls estimated in "
        f"{time.perf_counter() - start:.3f} s"
    )
    for concurrency in (1, 5):
        fake.requests.clear()
        # The same attempts give the same judge prompts: clear the cache so both runs call.
        from evals.judging.models import JudgeCacheEntry

        JudgeCacheEntry.objects.all().delete()
        start = time.perf_counter()
        run = eval_run_create(
            dataset=dataset,
            agent_version=version,
            rubric="tool_selection",
            concurrency=concurrency,
        )
        run = eval_run_execute(run_id=run.pk)
        elapsed = time.perf_counter() - start
        print(
            f"  concurrency {concurrency}: {run.rows_scored} rows scored, {len(fake.requests)} "
            f"calls in {elapsed:.2f} s = {run.rows_scored / elapsed:.1f} rows/s"
        )
    fake.requests.clear()
    start = time.perf_counter()
    run = eval_run_create(dataset=dataset, agent_version=version, rubric="tool_selection")
    run = eval_run_execute(run_id=run.pk)
    elapsed = time.perf_counter() - start
    cached = run.rows.filter(cached=True).count()
    print(
        f"  rerun at concurrency 5: {cached} of {run.rows_scored} judge answers from the cache, "
        f"{len(fake.requests)} calls (the agent's only) in {elapsed:.2f} s"
    )
    fake.stop()


if __name__ == "__main__":
    main()
