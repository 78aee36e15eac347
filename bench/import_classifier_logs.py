"""Benchmark: import a platform's classifier log lines with `classifier_logs_import`.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. The benchmark creates its own
database NAME_classifier_logs_bench beside NAME, fills it and drops it (BENCH_KEEP=1 keeps it).
It builds calls (with turns) in plain SQL, writes one log line per turn and classifier as the
platform logs them (injection and frustration on user turns, scope drift on agent turns) and
times, in one run:

  1. classifier_logs_import on that file: read, check every line, look the calls up, fold the lines
     into one verdict per call and classifier, write them (and their categories), commit;
  2. the same file again (every verdict already there: the idempotent no-op).

It prints lines and verdicts per second with the CPU seconds beside each wall-clock figure (the
machine may be shared) and the load average. Options: BENCH_CALLS (default 5000), BENCH_TURNS
(10).
"""

import json
import os
import random
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from support import (
    calls_copy,
    django_setup,
    postgres_url,
    scratch_database,
    timed_import,
)

CATEGORIES = ["instruction_override", "prompt_extraction", "persona_switch"]


def build(n_calls: int, n_turns: int) -> list[str]:
    """Create calls with turns; return their ids."""
    from django.db import transaction

    from evals.catalog.models import Agent, AgentVersion

    with transaction.atomic():
        av = AgentVersion.objects.create(agent=Agent.objects.create(name="support"), version="3")
        ids = [f"bench-call-{i:07d}" for i in range(n_calls)]
        calls_copy(av.pk, ids, n_turns, tenant="acme")
    return ids


def write_lines(path: Path, ids: list[str], n_turns: int) -> int:
    """Write the log lines (a call's lines together, as a platform flushes them); return how
    many."""
    rng = random.Random(7)
    n = 0
    with path.open("w") as f:
        for call in ids:
            for turn in range(n_turns):
                base = {"tenant": "acme", "agent": "support", "agent_version": "3", "call": call}
                if turn % 2:
                    flagged = rng.random() < 0.03
                    records = [
                        {
                            "event": "agent.injection_classifier.verdict",
                            "verdict": flagged,
                            "confidence": rng.randint(40, 99),
                            "category": rng.choice(CATEGORIES) if flagged else "none",
                        },
                        {
                            "event": "agent.ai_frustration.verdict",
                            "verdict": rng.choice(["none", "none", "situation", "ai"]),
                            "confidence": rng.randint(40, 99),
                        },
                    ]
                else:
                    flagged = rng.random() < 0.05
                    records = [
                        {
                            "event": "agent.scope_drift.verdict",
                            "verdict": flagged,
                            "confidence": rng.randint(40, 99),
                            "category": "off_topic" if flagged else "none",
                        }
                    ]
                for record in records:
                    f.write(json.dumps({**record, **base, "turn": turn}) + "\n")
                    n += 1
    return n


def import_file(path: Path):
    """Run classifier_logs_import on the file; return its result, wall seconds and CPU."""
    from evals.classifiers.services import classifier_logs_import

    return timed_import(classifier_logs_import, path)


def main() -> None:
    n_calls, n_turns = (
        int(os.environ.get(k, d)) for k, d in (("BENCH_CALLS", "5000"), ("BENCH_TURNS", "10"))
    )
    url = postgres_url(
        "import_classifier_logs.py",
        "docket",
        "it creates and drops its own database <name>_classifier_logs_bench beside that one",
    )
    name = f"{urlparse(url).path.lstrip('/') or 'docket'}_classifier_logs_bench"
    with scratch_database(url, name=name) as bench_url:
        django_setup(migrate=True, DATABASE_URL=bench_url)
        from django.db import connection

        from evals.judging.models import Verdict

        print(f"building {n_calls:,} calls x {n_turns} turns ...", flush=True)
        ids = build(n_calls, n_turns)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "classifier-logs.jsonl"
            n_lines = write_lines(path, ids, n_turns)
            print(f"log file: {n_lines:,} lines, {path.stat().st_size / 1e6:.0f} MB", flush=True)
            result, first, first_cpu = import_file(path)
            n_verdicts = Verdict.objects.count()
            assert result.created == n_verdicts == 3 * n_calls, result.summary
            again, second, second_cpu = import_file(path)
            assert again.unchanged == n_verdicts == Verdict.objects.count(), again.summary
        load = os.getloadavg()
        print(
            f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} (1 min), "
            f"{load[1]:.1f} (5 min): others' work slows every wall-clock figure"
        )
        for label, seconds, cpu in (
            ("classifier_logs_import, new:", first, first_cpu),
            ("same file again (no-op):", second, second_cpu),
        ):
            print(
                f"{label:31} {seconds:6.1f} s  {n_lines / seconds:>9,.0f} lines/s  "
                f"{n_verdicts / seconds:>8,.0f} verdicts/s  "
                f"{seconds / n_lines * 1e6:6.0f} us a line"
            )
            print(f"{'':32}{cpu}")
        connection.close()


if __name__ == "__main__":
    main()
