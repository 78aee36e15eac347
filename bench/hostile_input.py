"""Benchmark: what hostile input costs, through the API as a client would send it (issue 10).

Each input goes to its import endpoint over Django's test client, as an engineer, against a
scratch SQLite database; the script prints the answer (status and the first line of `detail`,
or the exception a 500 would have been) and the seconds it took. Run it on two checkouts to
compare. `python bench/hostile_input.py` (no PostgreSQL needed).
"""

import os
import sys
import tempfile
import time

from support import bench_client, django_setup

from tests.evals.import_helpers import ALIAS_BOMB

CALL = '{"id": "c-%d", "agent": "a", "agent_version": "1", "turns": [], "metadata": %s}'
NESTED = "[" * 100_000 + "]" * 100_000
INPUTS = [
    ("rules: YAML alias bomb", "rules/import/", "application/yaml", ALIAS_BOMB),
    ("rules: JSON nested 100,000 deep", "rules/import/", "application/json", NESTED),
    (
        "rules: YAML nested 5,000 deep",
        "rules/import/",
        "application/yaml",
        "rules:\n  - " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
    ),
    (
        "rules: YAML 5,000-digit number",
        "rules/import/",
        "application/yaml",
        "rules:\n  - {id: a.b, group: g, text: t, x: " + "9" * 5000 + "}\n",
    ),
    (
        "transcripts: metadata nested 1,000 deep",
        "transcripts/import/",
        "application/x-ndjson",
        CALL % (1, '{"a": ' * 990 + "1" + "}" * 990),
    ),
    (
        "transcripts: a 2^64 number in metadata",
        "transcripts/import/",
        "application/x-ndjson",
        CALL % (2, '{"n": 18446744073709551615}'),
    ),
    (
        "marks: JSON body nested 100,000 deep",
        "marks/",
        "application/json",
        '{"verdict": ' + NESTED + "}",
    ),
]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.pop("DATABASE_URL", None)
        django_setup(migrate=True, DOCKET_VAR_DIR=tmp)
        sys.setrecursionlimit(1000)
        client = bench_client("marco", "engineer")
        reviewer = bench_client("priya", "reviewer")
        client.get("/api/v1/rules/")  # the first request loads the URLs and views: not timed
        load = os.getloadavg()[0]
        print(f"machine: {os.cpu_count()} cores, load average {load:.1f}")
        for label, path, content_type, body in INPUTS:
            who = reviewer if path == "marks/" else client
            start = time.perf_counter()
            try:
                response = who.post(f"/api/v1/{path}", data=body, content_type=content_type)
                detail = (
                    response.json().get("detail", "")
                    if response.get("Content-Type", "").startswith("application/json")
                    else response.content[:60].decode()
                )
                answer = f"{response.status_code} {str(detail).splitlines()[0][:90]}"
            except Exception as exc:  # noqa: BLE001 - a 500 in production; the figure is the point
                answer = f"500 ({type(exc).__name__}: {str(exc)[:60]})"
            seconds = time.perf_counter() - start
            print(f"{label:42} {seconds * 1000:9.1f} ms  {answer}")


if __name__ == "__main__":
    main()
