"""Benchmark: import 1,000,000 verdicts with `verdicts_import`, beside COPYs of the same rows.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. The benchmark never touches NAME
itself: it creates its own database NAME_import_bench next to it, fills it, and drops it at the end
(BENCH_KEEP=1 keeps it). It builds transcripts (with turns) and rule versions with plain SQL, writes
the verdicts as JSON Lines to a temporary file, then times, in one run:

  1. verdicts_import on that file: read, parse, validate, look up ids and stored keys, COPY into
     the verdict table (its unique key, indexes and foreign keys checked), commit: everything
     `manage.py import_verdicts` does;
  2. the same file again (every verdict already there: the idempotent no-op);
  3. a bare COPY of the same rows (ids already resolved) into a plain table with no constraints
     and no indexes: the floor any importer could reach;
  4. a COPY of the same rows into the real verdict table (emptied first), with its keys, indexes
     and foreign keys: the floor of any importer that keeps the table's checks.

1 and 4 run BENCH_REPEAT times (5) in turn, each into the emptied table, and the median of each
is printed: a single run of each swings by a quarter with PostgreSQL's background work.

It prints the ratios (import / bare COPY, import / COPY into the verdict table, and that COPY /
the bare one: what the table's own key, indexes and foreign keys cost), CPU seconds
beside each wall-clock figure (the machine may be shared), the load average, and the import's
peak memory. Options: BENCH_VERDICTS (default 1000000), BENCH_RULES (25), BENCH_TURNS (20).
"""

import json
import os
import random
import resource
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from support import (
    calls_copy,
    cpu_seconds,
    cpu_since,
    django_setup,
    postgres_url,
    scratch_database,
    timed_import,
)

RATIONALES = [
    "The agent asked two questions in one turn.",
    "Greeted the candidate by name once.",
    "No hint at the expected answer.",
    "Acknowledged the answer before moving on.",
    "Interrupted the candidate mid-sentence.",
]


def bench_database_name(url: str) -> str:
    """Return the name of the benchmark's own database, beside the one DATABASE_URL names."""
    return f"{urlparse(url).path.lstrip('/') or 'docket'}_import_bench"


def build(n_verdicts: int, n_rules: int, n_turns: int) -> tuple[list[str], list[tuple[str, int]]]:
    """Create transcripts with turns and rule versions;
    return transcript ids and (rule, version) pairs."""
    from django.db import transaction

    from evals.catalog.models import Agent, AgentVersion
    from evals.rules.models import Rule, RuleVersion

    n_transcripts = -(-n_verdicts // n_rules)
    with transaction.atomic():
        av = AgentVersion.objects.create(
            agent=Agent.objects.create(name="phone-screen"), version="bench.1"
        )
        rules = []
        for i in range(n_rules):
            rule = Rule.objects.create(
                rule_id=f"bench.rule-{i:03d}", group="asking", severity="minor"
            )
            RuleVersion.objects.create(rule=rule, number=1, text=f"Bench rule {i}.")
            rules.append((rule.rule_id, 1))
        ids = [f"bench-call-{i:07d}" for i in range(n_transcripts)]
        calls_copy(av.pk, ids, n_turns)
    return ids, rules


def write_lines(
    path: Path, n_verdicts: int, ids: list[str], rules: list[tuple[str, int]], n_turns: int
) -> None:
    rng = random.Random(7)
    with path.open("w") as f:
        n = 0
        for ext in ids:
            for rule, version in rules:
                if n == n_verdicts:
                    return
                flagged = rng.random() < 0.12
                record = {
                    "transcript": ext,
                    "rule": rule,
                    "rule_version": version,
                    "flagged": flagged,
                    "severity": "minor",
                    "rationale": rng.choice(RATIONALES),
                    "confidence": rng.randint(40, 99),
                    "judge": "gpt-4o-mini/conduct-v3",
                }
                if flagged:
                    first = rng.randrange(n_turns - 2)
                    record["turn"] = first
                    if rng.random() < 0.3:
                        record["turns"] = [first, first + 2]
                f.write(json.dumps(record) + "\n")
                n += 1


def import_file(path: Path):
    """Run verdicts_import on the file; return its result, the wall seconds and the CPU line."""
    from evals.judging.services.importing import verdicts_import

    return timed_import(verdicts_import, path)


def stored_rows() -> list[tuple]:
    """Return the stored verdicts' values as COPY writes them (ids resolved), in import order."""
    from django.db import connection

    from evals.judging.services.importing import VERDICT_COLUMNS

    with connection.cursor() as cur:
        cur.execute(f"SELECT {', '.join(VERDICT_COLUMNS)} FROM evals_verdict ORDER BY id")
        return [(*r[:5], json.dumps(r[5]), *r[6:]) for r in cur.fetchall()]


def timed_copy(rows: list[tuple], table: str) -> tuple[float, str]:
    """COPY the rows into `table` in one transaction (commit included); return seconds and CPU."""
    from django.db import connection, transaction

    from evals.judging.services.importing import VERDICT_COLUMNS

    cpu = cpu_seconds()
    start = time.perf_counter()
    with (
        transaction.atomic(),
        connection.cursor() as cur,
        cur.copy(f"COPY {table} ({', '.join(VERDICT_COLUMNS)}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)
    return time.perf_counter() - start, cpu_since(cpu)


def bare_copy(rows: list[tuple]) -> tuple[float, str]:
    """COPY the rows into a plain table without constraints or indexes."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "CREATE TABLE plain_verdict (transcript_id bigint, rule_version_id bigint, "
            "judge_id bigint, flagged boolean, turn integer, turns jsonb, severity varchar(10), "
            "rationale text, confidence smallint, error text, created_at timestamptz)"
        )
    return timed_copy(rows, "plain_verdict")


def empty_verdicts() -> None:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("TRUNCATE evals_verdict CASCADE")


def table_copy(rows: list[tuple]) -> tuple[float, str]:
    """COPY the rows into the real verdict table, emptied first, with all its checks."""
    empty_verdicts()
    return timed_copy(rows, "evals_verdict")


def median_run(runs: list[tuple[float, str]]) -> tuple[float, str]:
    """Return the run (seconds, CPU line) of median CPU."""
    return sorted(runs, key=lambda run: cpu_total(run[1]))[len(runs) // 2]


def cpu_total(line: str) -> float:
    """Return the total of a cpu_since line (client + server, or client alone)."""
    return float(line.rstrip(" s").rsplit(" ", 1)[-1])


def main() -> None:
    url = postgres_url(
        "import_verdicts.py",
        "docket",
        "it creates and drops its own database <name>_import_bench beside that one",
    )
    n_verdicts = int(os.environ.get("BENCH_VERDICTS", "1000000"))
    n_rules = int(os.environ.get("BENCH_RULES", "25"))
    n_turns = int(os.environ.get("BENCH_TURNS", "20"))
    repeat = int(os.environ.get("BENCH_REPEAT", "5"))

    with scratch_database(url, name=bench_database_name(url)) as bench_url:
        django_setup(migrate=True, DATABASE_URL=bench_url)
        from django.db import connection

        from evals.judging.models import Verdict

        print(
            f"building {-(-n_verdicts // n_rules):,} calls x "
            f"{n_turns} turns and {n_rules} rule versions ...",
            flush=True,
        )
        ids, rules = build(n_verdicts, n_rules, n_turns)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "verdicts.jsonl"
            write_lines(path, n_verdicts, ids, rules, n_turns)
            size_mb = path.stat().st_size / 1e6
            print(f"verdicts file: {n_verdicts:,} lines, {size_mb:.0f} MB", flush=True)

            result, first, first_cpu = import_file(path)
            peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            assert result.created == n_verdicts == Verdict.objects.count(), result.summary

            again, second, second_cpu = import_file(path)
            assert again.unchanged == n_verdicts and Verdict.objects.count() == n_verdicts, (
                again.summary
            )

            rows = stored_rows()
            copy_s, copy_cpu = bare_copy(rows)
            # The import and the COPY into the verdict table in turn, each into the emptied
            # table, the median of each: one run of each, one after the other, swings by a
            # quarter with what the machine and PostgreSQL's background work do meanwhile.
            imports, copies = [(first, first_cpu)], []
            for i in range(repeat):
                copies.append(table_copy(rows))
                if i < repeat - 1:
                    empty_verdicts()
                    result, seconds, cpu = import_file(path)
                    assert result.created == n_verdicts, result.summary
                    imports.append((seconds, cpu))
        first, first_cpu = median_run(imports)
        table_s, table_cpu = median_run(copies)
        load = os.getloadavg()
        print(
            f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} (1 min), "
            f"{load[1]:.1f} (5 min): others' work slows every wall-clock figure"
        )
        print(f"the import and the COPY into the verdict table: median of {repeat} runs in turn")
        print(
            f"verdicts_import, new verdicts:         {first:6.1f} s  "
            f"{n_verdicts / first:>10,.0f} rows/s"
        )
        print(f"{'':39}{first_cpu}")
        print(
            f"verdicts_import, same file again:      {second:6.1f} s  "
            f"{n_verdicts / second:>10,.0f} rows/s  (all unchanged)"
        )
        print(f"{'':39}{second_cpu}")
        print(
            f"bare COPY into a plain table:          {copy_s:6.1f} s  "
            f"{len(rows) / copy_s:>10,.0f} rows/s"
        )
        print(f"{'':39}{copy_cpu}")
        print(
            f"COPY into the verdict table:           {table_s:6.1f} s  "
            f"{len(rows) / table_s:>10,.0f} rows/s  (key, indexes, foreign keys)"
        )
        print(f"{'':39}{table_cpu}")
        print(
            f"import / bare COPY:                   {first / copy_s:.1f}x time, "
            f"{cpu_total(first_cpu) / cpu_total(copy_cpu):.2f}x CPU"
        )
        print(
            f"import / COPY into the verdict table: {first / table_s:.1f}x time, "
            f"{cpu_total(first_cpu) / cpu_total(table_cpu):.2f}x CPU (the issue's figure: CPU)"
        )
        print(
            f"COPY into the verdict table / bare COPY: {table_s / copy_s:.1f}x time, "
            f"{cpu_total(table_cpu) / cpu_total(copy_cpu):.1f}x CPU (the table's own checks)"
        )
        print(f"peak memory of this process during the import: {peak_mb:,.0f} MB")
        connection.close()


if __name__ == "__main__":
    main()
