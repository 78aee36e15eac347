"""What the benchmarks share: a scratch PostgreSQL database, Django set-up, COPY, timing, printing.

A benchmark script runs as `python bench/<name>.py`, so this folder is first on sys.path and
`import support` finds this module; importing it puts the project root on sys.path too.
"""

import io
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def postgres_url(script: str, example: str, why: str) -> str:
    """Return DATABASE_URL, or exit with status 2 saying the script needs PostgreSQL."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        print(
            f"bench/{script} needs PostgreSQL: set DATABASE_URL=postgres://postgres@127.0.0.1:5432/{example}\n"
            f"({why}).",
            file=sys.stderr,
        )
        sys.exit(2)
    return url


DEDICATED = "a dedicated database: the benchmark creates, fills and drops it"


@contextmanager
def scratch_database(url: str, *, name: str | None = None, reuse: bool = False) -> Iterator[str]:
    """Drop and create the database (the one in `url`, or `name` beside it) and yield its URL.

    The database is dropped afterwards unless BENCH_KEEP=1; with `reuse` an existing one is kept
    as it is and timed again.
    """
    import psycopg

    parts = urlparse(url)
    name = name or parts.path.lstrip("/")
    admin = psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True)
    try:
        if not reuse:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        yield parts._replace(path=f"/{name}").geturl()
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def django_setup(*, migrate: bool = False, log_level: str = "WARNING", **env: str) -> None:
    """Set Django up with the console settings (DEBUG on, quiet logs), then migrate if asked."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    os.environ.setdefault("DOCKET_LOG_LEVEL", log_level)
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def judge_bench_setup(prefix: str):
    """Start the local chat-completions server (tests/evals/judge_server.py) and set Django up
    against it: a throwaway SQLite database in a temporary folder (BENCH_DATABASE_URL=postgres://
    ... for a dedicated PostgreSQL one instead), eager Celery, INFO logs off; return the server."""
    import logging
    import tempfile

    from tests.evals.judge_server import FakeJudge

    fake = FakeJudge().start()
    if os.environ.get("BENCH_DATABASE_URL"):
        os.environ["DATABASE_URL"] = os.environ["BENCH_DATABASE_URL"]
    else:
        os.environ.pop("DATABASE_URL", None)
    django_setup(
        DJANGO_SETTINGS_MODULE="console.settings",
        DJANGO_DEBUG="1",
        DOCKET_VAR_DIR=tempfile.mkdtemp(prefix=prefix),
        DOCKET_LOG_LEVEL="ERROR",
        JUDGE_BASE_URL=fake.base_url,
        JUDGE_MAX_RETRIES="0",
        JUDGE_COST_CAP_USD="0",
        CELERY_BROKER_URL="",
    )
    logging.disable(logging.INFO)
    return fake


def copy_rows(cursor, table: str, columns: list[str], rows: Iterable[tuple]) -> int:
    """COPY an iterable of tuples into a table (psycopg cursor, text format); return how many."""
    n = 0
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        buf = io.StringIO()
        for row in rows:
            buf.write("\t".join("\\N" if v is None else str(v) for v in row))
            buf.write("\n")
            n += 1
            if n % 50000 == 0:
                copy.write(buf.getvalue())
                buf = io.StringIO()
        copy.write(buf.getvalue())
    return n


def calls_copy(av_id: int, ids: list[str], n_turns: int, tenant: str = "") -> None:
    """COPY calls of one agent version with n_turns plain turns each (agent on even turns, user
    on odd), then ANALYZE: the calls an import benchmark judges or classifies."""
    from django.db import connection
    from django.utils import timezone

    now = timezone.now()
    with connection.cursor() as cur:
        with cur.copy(
            "COPY evals_transcript (external_id, agent_version_id, checksum, "
            "audio_url, language, scenario, tenant, imported_at, metadata) FROM STDIN"
        ) as copy:
            for ext in ids:
                copy.write_row((ext, av_id, "0" * 64, "", "en", "", tenant, now, "{}"))
        cur.execute(
            "INSERT INTO evals_turn (transcript_id, index, speaker, text, "
            "phase, tool_calls, tool_call_id) SELECT t.id, g, CASE WHEN g %% "
            "2 = 0 THEN 'agent' ELSE 'user' END, 'turn text', '', '[]', '' "
            "FROM evals_transcript t CROSS JOIN generate_series(0, %s) AS g",
            [n_turns - 1],
        )
        cur.execute("ANALYZE")


def sequences_reset(cursor, tables: Iterable[str]) -> None:
    """Move each table's id sequence past the ids COPY wrote."""
    for table in tables:
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
        )


def counts_line(counts: dict) -> str:
    """Return 'loaded: calls 100,000, load_s 12.3, ...' for a dict of load figures."""
    return "loaded: " + ", ".join(
        f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in counts.items()
    )


def bench_client(username: str, role: str):
    """Return a Django test client logged in as a new user holding one role."""
    from django.conf import settings
    from django.test import Client

    from tests.factories import UserFactory

    if "testserver" not in settings.ALLOWED_HOSTS:
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    client.force_login(UserFactory(username=username, roles=[role]))
    return client


@dataclass
class Timing:
    """Seconds of each timed round, and the queries and result of the last one."""

    seconds: list[float] = field(default_factory=list)
    queries: int = 0
    result: object = None

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def p90(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[int(0.9 * (len(ordered) - 1))]


def timed(
    fn: Callable[[int], object], *, rounds: int, warmup: int = 0, count_queries: bool = True
) -> Timing:
    """Call fn(i) `warmup` times untimed, then `rounds` times timed; return the Timing.

    With count_queries each timed round runs under CaptureQueriesContext (which forces the debug
    cursor), as the page benchmarks have always done; pass False to time the bare call.
    """
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for i in range(warmup):
        fn(i)
    timing = Timing()
    for i in range(rounds):
        if count_queries:
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                timing.result = fn(i)
                timing.seconds.append(time.perf_counter() - start)
            timing.queries = len(ctx.captured_queries)
        else:
            start = time.perf_counter()
            timing.result = fn(i)
            timing.seconds.append(time.perf_counter() - start)
    return timing


def timed_get(
    client, path: str, *, rounds: int, warmup: int = 0, headers: dict | None = None
) -> Timing:
    """Time `rounds` GETs of a page (after `warmup` untimed ones), each checked to answer 200."""

    def get(i: int):
        response = client.get(path, headers=headers or {})
        assert response.status_code == 200, (path, response.status_code)
        return response

    return timed(get, rounds=rounds, warmup=warmup)


def cpu_seconds() -> tuple[float, float]:
    """Return CPU seconds used so far by this process
    and by its PostgreSQL backend (None if unreadable).

    Wall-clock figures on a shared machine include the time other work held the CPU; CPU seconds
    do not, so they are printed beside them.
    """
    from django.db import connection

    connection.ensure_connection()
    return time.process_time(), process_cpu_seconds(connection.connection.info.backend_pid)


def process_cpu_seconds(pid: int) -> float | None:
    """Return the CPU seconds another process (a PostgreSQL backend) has used, None if unreadable:
    to the nanosecond from /proc/PID/schedstat where the kernel keeps it, else in clock ticks
    (10 ms, too coarse for a page's few milliseconds) from /proc/PID/stat."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_since(start: tuple[float, float]) -> str:
    now = cpu_seconds()
    client = now[0] - start[0]
    if start[1] is None or now[1] is None:
        return f"CPU: client {client:.1f} s"
    return (
        f"CPU: client {client:.1f} s + server {now[1] - start[1]:.1f} "
        f"s = {client + now[1] - start[1]:.1f} s"
    )


def timed_import(run: Callable, path: Path, **kwargs):
    """Run an importer service on a file opened in binary (`lines=`, `source=`); return its
    result, the wall seconds and the CPU line."""
    cpu = cpu_seconds()
    start = time.perf_counter()
    with path.open("rb") as f:
        result = run(lines=f, source=str(path), **kwargs)
    return result, time.perf_counter() - start, cpu_since(cpu)
