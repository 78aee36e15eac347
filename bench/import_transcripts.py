"""Benchmark: the memory and time of a transcripts import, by the file's size.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. It creates NAME_transcripts_bench
beside NAME and drops it at the end (BENCH_KEEP=1 keeps it). For each size (BENCH_CALLS, by
default 10,000 and 100,000 native calls of 12 turns, as bench/import_page.py writes them) it
imports the file twice, each time into an emptied database and in a fresh process, so that each
peak is that import's own:

  command: `manage.py import_transcripts FILE --agent bench --agent-version 1`;
  page:    the file stored as the import page stores an upload and its job run as the page's
           worker runs it (the same service, fed line by line from the stored file).

It prints each import's seconds and CPU, the process's resident memory before the import and at
its peak (getrusage's ru_maxrss), and the growth per MB of input: flat when the peak stays the
same whatever the file's size.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path
from urllib.parse import urlparse

from import_page import peak_mb, rss_mb, run_job, write_calls
from support import cpu_seconds, cpu_since, django_setup, postgres_url, scratch_database

MB = 1024 * 1024


def child(path: str, file: str) -> None:
    """Import the file by one path in this (fresh) process; print the figures as JSON."""
    from django.core.management import call_command

    from evals.catalog.models import Transcript

    before, cpu, start = rss_mb(), cpu_seconds(), time.perf_counter()
    if path == "command":
        options = ["--agent", "bench", "--agent-version", "1"]
        call_command("import_transcripts", file, *options, stdout=StringIO())
    else:
        from django.contrib.auth import get_user_model

        from tests.factories import UserFactory

        user = get_user_model().objects.filter(username="bench").first()
        user = user or UserFactory(username="bench", roles=["engineer"])
        sys.stdout = StringIO()  # run_job's lines per tenth: only the figures below are kept
        run_job("transcripts", Path(file), user, agent="bench", agent_version="1")
        sys.stdout = sys.__stdout__
    seconds, cpu = time.perf_counter() - start, cpu_since(cpu)
    figures = {"before": before, "peak": peak_mb(), "seconds": seconds, "cpu": cpu}
    print(json.dumps({**figures, "calls": Transcript.objects.count()}))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        django_setup(DOCKET_IMPORT_DIR=tempfile.mkdtemp(prefix="docket-bench-imports-"))
        child(sys.argv[2], sys.argv[3])
        return
    url = postgres_url("import_transcripts.py", "docket", "COPY and a database it may drop")
    name = f"{urlparse(url).path.lstrip('/') or 'docket'}_transcripts_bench"
    sizes = [int(n) for n in os.environ.get("BENCH_CALLS", "10000,100000").split(",")]
    with scratch_database(url, name=name) as scratch, tempfile.TemporaryDirectory() as folder:
        django_setup(migrate=True, DATABASE_URL=scratch)
        from django.db import connection

        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")
        for n in sizes:
            file = Path(folder) / f"calls-{n}.jsonl"
            write_calls(file, 0, count=n)
            size_mb = file.stat().st_size / MB
            for path in ("command", "page"):
                with connection.cursor() as cur:
                    cur.execute("TRUNCATE evals_transcript, evals_agent CASCADE")
                out = subprocess.run(
                    [sys.executable, __file__, "--child", path, str(file)],
                    env={**os.environ, "DATABASE_URL": scratch},
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                got = json.loads(out.strip().splitlines()[-1])
                assert got["calls"] == n, got
                grown = got["peak"] - got["before"]
                print(
                    f"{n:>7,} calls ({size_mb:4.0f} MB) {path:7}  {got['seconds']:6.1f} s  "
                    f"{got['cpu']}\n{'':30} resident {got['before']:.0f} MB before, peak "
                    f"{got['peak']:.0f} MB: +{grown:.0f} MB ({grown / size_mb:.2f} MB per MB)",
                    flush=True,
                )
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
