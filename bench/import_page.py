"""Benchmark: a large file imported from the import page, as the worker runs it.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. It creates NAME_page_bench beside
NAME and drops it at the end (BENCH_KEEP=1 keeps it). For a verdicts file (BENCH_VERDICT_MB, 200
MB by default) and a transcripts file (BENCH_CALL_MB, 50 MB; both importers stream), it writes
the file, stores it as the page stores an upload (`import_job_upload`) and starts the job: without
a broker its task runs in a thread of this process, as under `make run`, while this thread reads
the progress the page polls (`import_job_progress`) every second. It prints, for each, a line per
tenth of the file read (the page's figures, the elapsed time and the process's resident memory),
then the total time, the peak memory above the start, and that peak per MB of input.
"""

import json
import os
import random
import resource
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from support import django_setup, postgres_url, scratch_database

MB = 1024 * 1024


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_calls(path: Path, size_mb: int, count: int | None = None) -> int:
    """Write native calls of 12 turns until the file holds `size_mb` (or `count` calls); return
    how many."""
    rng = random.Random(7)
    n = 0
    with path.open("w") as f:
        while (f.tell() < size_mb * MB) if count is None else n < count:
            turns = [
                {
                    "speaker": "agent" if i % 2 == 0 else "user",
                    "text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))),
                    "start_ms": i * 4000,
                    "end_ms": i * 4000 + 3500,
                }
                for i in range(12)
            ]
            f.write(json.dumps({"id": f"bench-{n:07d}", "turns": turns}) + "\n")
            n += 1
    return n


def write_verdicts(path: Path, size_mb: int, calls: int, rules: list[tuple[str, int]]) -> int:
    rng = random.Random(11)
    n = 0
    with path.open("w") as f:
        while f.tell() < size_mb * MB:
            rule, version = rules[n % len(rules)]
            flagged = rng.random() < 0.1
            line = {
                "transcript": f"bench-{(n // len(rules)) % calls:07d}",
                "rule": rule,
                "rule_version": version,
                "flagged": flagged,
                "rationale": "The agent asked two questions in one turn." if flagged else "Fine.",
                "confidence": rng.randint(50, 99),
                "judge": f"bench/judge-{n // (calls * len(rules))}",
            }
            if flagged:
                line["turn"] = rng.randint(0, 11)
            f.write(json.dumps(line) + "\n")
            n += 1
    return n


WORDS = ["the", "candidate", "built", "payment", "systems", "and", "cut", "a", "cloud", "bill"]


def run_job(kind: str, path: Path, user, **values) -> None:
    """Store the file as an upload, start its import (without a broker the task runs in a
    thread of this process, as under `make run`), and follow it as the page does."""
    from django.core.files.uploadedfile import UploadedFile

    from core.import_jobs import import_job_progress, import_job_start
    from core.import_jobs import import_job_upload as upload

    with path.open("rb") as handle:
        stored = UploadedFile(handle, name=path.name, size=path.stat().st_size)
        job = upload(kind=kind, upload=stored, actor=user)
    start_rss, started = rss_mb(), time.monotonic()
    import_job_start(job_id=job.pk, actor=user, values=values)
    size_mb = job.size / MB
    print(f"\n{kind}: {path.name}, {size_mb:,.0f} MB; resident memory at start {start_rss:.0f} MB")
    next_tenth, top = 10, start_rss
    while not job.finished:
        time.sleep(1.0)
        job.refresh_from_db()
        seen = import_job_progress(job)
        top = max(top, rss_mb())
        if seen["percent"] >= next_tenth or job.finished:
            rows = f", {seen['rows']:,} rows written" if seen["rows"] is not None else ""
            print(
                f"  {time.monotonic() - started:6.1f} s  {job.get_status_display():16} "
                f"read {seen['percent']:3d}%{rows}; resident {rss_mb():.0f} MB"
            )
            next_tenth = (seen["percent"] // 10 + 1) * 10
    elapsed = time.monotonic() - started
    grown = top - start_rss
    print(
        f"  {job.get_status_display()} in {elapsed:.1f} s ({size_mb / elapsed:.1f} MB/s): "
        f"{(job.result.get('summary') or job.detail).splitlines()[0]}"
    )
    print(
        f"  resident memory: +{grown:.0f} MB at most ({grown / size_mb:.2f} MB per MB of input); "
        f"process peak {peak_mb():.0f} MB; load average {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    url = postgres_url("import_page.py", "docket", "COPY and a database it may drop")
    name = f"{urlparse(url).path.lstrip('/') or 'docket'}_page_bench"
    verdict_mb = int(os.environ.get("BENCH_VERDICT_MB", "200"))
    call_mb = int(os.environ.get("BENCH_CALL_MB", "50"))
    with scratch_database(url, name=name) as scratch, tempfile.TemporaryDirectory() as folder:
        django_setup(
            migrate=True, DATABASE_URL=scratch, DOCKET_IMPORT_DIR=str(Path(folder) / "imports")
        )
        from evals.rules.importing import rules_import
        from tests.evals.import_helpers import RULES_YAML
        from tests.factories import UserFactory

        user = UserFactory(username="bench", roles=["engineer"])
        rules_import(text=RULES_YAML)
        rules = [("opening.greet-by-name", 1), ("boundaries.no-rubric-leak", 1)]
        calls = Path(folder) / "calls.jsonl"
        n_calls = write_calls(calls, call_mb)
        run_job("transcripts", calls, user, agent="bench", agent_version="1")
        verdicts = Path(folder) / "verdicts.jsonl"
        n = write_verdicts(verdicts, verdict_mb, n_calls, rules)
        print(f"\n({n:,} verdicts over {n_calls:,} calls)")
        run_job("verdicts", verdicts, user)


if __name__ == "__main__":
    main()
