"""Benchmark: import 100,000 marks with `marks_import` (what `manage.py import_marks` runs).

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. The benchmark never touches NAME
itself: it creates NAME_marks_bench beside it, fills it, and drops it at the end (BENCH_KEEP=1
keeps it). It builds calls, rule versions, one judge's verdicts (COPY) and 20 reviewers, writes
the marks as JSON Lines (each verdict marked by one reviewer, one in ten by a second), then times:

  1. marks_import on that file: parse, check, look up verdicts, reviewers and assignments, write
     through marks_write, the verdict tally's triggers recounting each marked verdict, commit;
  2. the same file again (every mark already says that: the idempotent no-op);
  3. mark_set, one mark at a time as the review page writes them, on a few hundred verdicts:
     what the same marks would cost through the browser's path, per mark.

It checks that the tally equals a fresh recount (verdict_tally_rebuild --check), and prints CPU
seconds beside each wall-clock figure (the machine may be shared), the load average and the peak
memory. Options: BENCH_MARKS (default 100000), BENCH_RULES (10).
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
    copy_rows,
    cpu_seconds,
    cpu_since,
    django_setup,
    postgres_url,
    scratch_database,
    sequences_reset,
)

REVIEWERS = 20


def build(n_marks: int, n_rules: int) -> list[tuple[str, str, str]]:
    """Create calls, rule versions, verdicts and reviewers; return (call, rule, reviewer) of each
    mark to write, in a shuffled order."""
    from django.db import connection, transaction

    from evals.catalog.models import Agent, AgentVersion
    from evals.judging.models import Judge
    from evals.judging.services.importing import VERDICT_COLUMNS
    from evals.rules.models import Rule, RuleVersion
    from tests.factories import UserFactory

    rng = random.Random(20261201)
    n_verdicts = round(n_marks / 1.1)  # one in ten verdicts gets a second reviewer
    n_calls = -(-n_verdicts // n_rules)
    with transaction.atomic():
        av = AgentVersion.objects.create(
            agent=Agent.objects.create(name="phone-screen"), version="bench.1"
        )
        rules = Rule.objects.bulk_create(
            [Rule(rule_id=f"asking.rule-{i:02d}", group="asking") for i in range(n_rules)]
        )
        rvs = RuleVersion.objects.bulk_create(
            [RuleVersion(rule=r, number=1, text="Ask one question.") for r in rules]
        )
        judge = Judge.objects.create(name="gpt-4o-mini/conduct-v3", kind="llm")
        reviewers = [UserFactory(username=f"rev{i}", roles=["reviewer"]) for i in range(REVIEWERS)]
        now = "2026-12-01 06:00:00+00"
        with connection.cursor() as cur:
            copy_rows(
                cur.cursor,
                "evals_transcript",
                [
                    "id",
                    "external_id",
                    "agent_version_id",
                    "checksum",
                    "audio_url",
                    "language",
                    "scenario",
                    "tenant",
                    "imported_at",
                    "metadata",
                ],
                (
                    (i, f"call-{i:07d}", av.pk, f"{i:064x}", "", "en", "", "", now, "{}")
                    for i in range(1, n_calls + 1)
                ),
            )
            copy_rows(
                cur.cursor,
                "evals_verdict",
                list(VERDICT_COLUMNS),
                (
                    (t, rv.pk, judge.pk, flagged, None, "[]", "", "", 80, "", now)
                    for t in range(1, n_calls + 1)
                    for rv in rvs
                    for flagged in [False]
                ),
            )
            sequences_reset(cur, ("evals_transcript",))
            cur.execute("ANALYZE")
    marks = []
    for t in range(1, n_calls + 1):
        for rv in rules:
            if len(marks) >= n_marks:
                break
            who = rng.sample(reviewers, 2 if rng.random() < 0.1 else 1)
            marks += [(f"call-{t:07d}", rv.rule_id, r.username) for r in who]
    rng.shuffle(marks)
    return marks[:n_marks]


def write_lines(marks, path: Path) -> None:
    rng = random.Random(7)
    with path.open("w") as f:
        for call, rule, reviewer in marks:
            line = {
                "transcript": call,
                "rule": rule,
                "rule_version": 1,
                "judge": "gpt-4o-mini/conduct-v3",
                "reviewer": reviewer,
                "correct": rng.random() < 0.85,
                "note": "" if rng.random() < 0.9 else "asked two questions in one turn",
            }
            f.write(json.dumps(line) + "\n")


def main() -> None:
    url = postgres_url("import_marks.py", "docket", "it creates and drops NAME_marks_bench")
    n_marks = int(os.environ.get("BENCH_MARKS", "100000"))
    n_rules = int(os.environ.get("BENCH_RULES", "10"))
    name = f"{urlparse(url).path.lstrip('/') or 'docket'}_marks_bench"
    with scratch_database(url, name=name) as db_url:
        django_setup(migrate=True, DATABASE_URL=db_url)
        from django.db import connection

        from evals.judging.models import Verdict
        from labeling.models import Mark, VerdictTally
        from labeling.services.marks import mark_set
        from labeling.services.marks_import import marks_import
        from labeling.services.tally import verdict_tally_differences

        t0 = time.perf_counter()
        marks = build(n_marks, n_rules)
        print(
            f"built {Verdict.objects.count():,} verdicts, {len(marks):,} marks to import "
            f"in {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "marks.jsonl"
            write_lines(marks, path)
            size = path.stat().st_size
            for label in ("import", "again (no-op)"):
                cpu = cpu_seconds()
                load = os.getloadavg()[0]
                start = time.perf_counter()
                with path.open("rb") as f:
                    result = marks_import(lines=f, source=str(path))
                wall = time.perf_counter() - start
                print(
                    f"{label}: {result.summary.splitlines()[0]} in {wall:.1f} s "
                    f"({len(marks) / wall:,.0f} marks/s; {cpu_since(cpu)}; load {load:.1f})",
                    flush=True,
                )
        print(
            f"file: {size / 1e6:.1f} MB; marks stored {Mark.objects.count():,}, tally rows "
            f"{VerdictTally.objects.count():,}, tally differs from a recount on "
            f"{verdict_tally_differences()} verdicts"
        )
        from django.contrib.auth import get_user_model

        reviewer = get_user_model().objects.get(username="rev0")
        some = list(Verdict.objects.order_by("pk")[:400])
        cpu = cpu_seconds()
        start = time.perf_counter()
        for v in some:
            mark_set(reviewer=reviewer, verdict=v, correct=False)
        per = (time.perf_counter() - start) / len(some)
        print(
            f"mark_set one at a time (the browser's path): {per * 1000:.1f} ms a mark, "
            f"{1 / per:,.0f} marks/s ({cpu_since(cpu)} for {len(some)})"
        )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of this process: {peak:.0f} MB")
        connection.close()


if __name__ == "__main__":
    main()
