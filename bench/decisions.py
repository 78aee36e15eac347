"""Benchmark: decision points at scale. Prints figures, asserts nothing about speed.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. It creates its own database
NAME_decisions_bench beside NAME and drops it afterwards (BENCH_KEEP=1 keeps it). It times:

  1. transcripts_import of BENCH_CALLS calls of BENCH_TURNS timed turns with no decision kind
     (the importer as it was), then the same number of other calls with a derived turn-taking
     kind and two reported decisions a line: what decisions add to an import;
  2. the same file again (every call and decision already there: the no-op);
  3. decision_labels_bulk on a fifth of the decisions, then decision_accuracy_table (the page's,
     the API's and the command's figures) over all of them.
Options: BENCH_CALLS (default 2000), BENCH_TURNS (40).
"""

import json
import os
import random
import time
from urllib.parse import urlparse

from support import django_setup, postgres_url, scratch_database

KINDS = """\
decision_kinds:
  - id: turn-taking
    question: Was the candidate done talking?
    answers: [take the turn, wait]
    derive: turn_gap
  - id: interruption
    question: Was it an interruption?
    answers: [stop, go on]
"""


def lines(prefix: str, n_calls: int, n_turns: int, decided: bool) -> list[str]:
    rng = random.Random(prefix)
    out = []
    for c in range(n_calls):
        turns, t = [], 0
        for i in range(n_turns):
            start = t + rng.randint(-300, 1500)
            end = max(start, 0) + rng.randint(800, 6000)
            turns.append(
                {
                    "speaker": "agent" if i % 2 == 0 else "user",
                    "text": "words " * 12,
                    "start_ms": max(start, 0),
                    "end_ms": end,
                }
            )
            t = end
        record = {"id": f"{prefix}-{c:06d}", "agent": "phone-screen", "agent_version": "b.1"}
        record["turns"] = turns
        if decided:
            record["decisions"] = [
                {"kind": "interruption", "turn": 2 * k + 2, "choice": "go on", "confidence": 0.7}
                for k in range(2)
            ]
        out.append(json.dumps(record))
    return out


def main() -> None:
    url = postgres_url("decisions.py", "docket", "COPY and the row counts of a real deployment")
    n_calls = int(os.environ.get("BENCH_CALLS", "2000"))
    n_turns = int(os.environ.get("BENCH_TURNS", "40"))
    name = f"{urlparse(url).path.lstrip('/') or 'docket'}_decisions_bench"
    with scratch_database(url, name=name) as bench_url:
        django_setup(migrate=True, DATABASE_URL=bench_url)
        from django.contrib.auth import get_user_model

        from evals.catalog.services.importing import transcripts_import
        from evals.decisions.models import Decision
        from evals.decisions.selectors import decision_accuracy_table
        from evals.decisions.services.kinds import decision_kinds_import
        from labeling.services.decisions import decision_labels_bulk

        plain = lines("plain", n_calls, n_turns, decided=False)
        t0 = time.perf_counter()
        transcripts_import(lines=plain)
        t_plain = time.perf_counter() - t0

        decision_kinds_import(text=KINDS)
        decided = lines("decided", n_calls, n_turns, decided=True)
        t0 = time.perf_counter()
        result = transcripts_import(lines=decided)
        t_decided = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = transcripts_import(lines=decided)
        t_again = time.perf_counter() - t0
        assert again.changed is False

        user = get_user_model().objects.create(username="bench-reviewer")
        sample = list(Decision.objects.select_related("kind_version").order_by("pk")[::5])
        rng = random.Random(5)
        labels = [(user, d, rng.choice(d.kind_version.answers)) for d in sample]
        t0 = time.perf_counter()
        decision_labels_bulk(labels)
        t_labels = time.perf_counter() - t0
        t0 = time.perf_counter()
        rows = decision_accuracy_table()
        t_table = time.perf_counter() - t0

        total = Decision.objects.count()
        print(f"calls per import {n_calls:,}, turns per call {n_turns}")
        print(f"import without decision kinds: {t_plain:.2f} s")
        print(
            f"import with decisions: {t_decided:.2f} s "
            f"({result.details.get('decisions', 0):,} decisions, "
            f"{t_decided / t_plain:.2f}x the plain import)"
        )
        print(f"the same file again (no-op): {t_again:.2f} s")
        print(f"labels: {len(labels):,} in {t_labels:.2f} s")
        print(
            f"accuracy table over {total:,} decisions ({len(rows)} rows): {t_table * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
