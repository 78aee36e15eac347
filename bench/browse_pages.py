"""Benchmark: the browsing pages (calls, a 300-turn call,
rules, a rule, verdicts, dashboard) at 100,000 calls.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME names a database the benchmark may
create, fill and DROP (use a dedicated one, e.g. docket_bench_browse). It loads the calls, turns,
rules and verdicts with COPY, then requests each page through Django's test client as a lead
(the full view: selectors, template, middleware) and prints the time and the number of queries
of each. Options: BENCH_CALLS (default 100000), BENCH_RULES (default 25), BENCH_TURNS (turns per
call, default 10), BENCH_KEEP=1 to keep the database afterwards, BENCH_REUSE=1 to time a database
kept by an earlier run without loading it again. Heavy figures are cached while the data holds
(evals.judging.selectors.browse.figures_cached): each page is timed cold (cache cleared) and warm.
"""

import os
import random
import time

from support import (
    DEDICATED,
    bench_client,
    copy_rows,
    counts_line,
    django_setup,
    postgres_url,
    scratch_database,
    sequences_reset,
    timed_get,
)


def load(n_calls: int, n_rules: int, n_turns: int) -> dict:
    from django.db import connection

    from evals.catalog.models import Agent, AgentVersion, Turn
    from evals.catalog.services.importing import TURN_COLUMNS
    from evals.judging.models import Judge
    from evals.rules.models import Rule, RuleVersion

    rng = random.Random(20261130)
    agent = Agent.objects.create(name="phone-screen")
    versions = [
        AgentVersion.objects.create(agent=agent, version=v)
        for v in ("2026-11-21.1", "2026-11-28.1")
    ]
    groups = [
        "opening",
        "asking",
        "acknowledging",
        "language",
        "requests",
        "boundaries",
        "closing",
        "signals",
    ]
    rules = Rule.objects.bulk_create(
        [
            Rule(rule_id=f"{groups[i % 8]}.rule-{i:03d}", group=groups[i % 8], safety=(i % 8 == 5))
            for i in range(n_rules)
        ]
    )
    rvs = RuleVersion.objects.bulk_create(
        [
            RuleVersion(
                rule=r, number=1, text=f"Rule text {i}.", status="gated" if i % 2 else "candidate"
            )
            for i, r in enumerate(rules)
        ]
    )
    judge = Judge.objects.create(name="gpt-4o-mini/conduct-v3", kind="llm")
    now = "2026-11-30 06:00:00+00"
    counts = {}
    t0 = time.perf_counter()
    long_call = n_calls + 1  # one extra call with 300 turns
    with connection.cursor() as cur:
        raw = cur.cursor

        def calls():
            for i in range(1, n_calls + 2):
                day = 1 + (i * 89 // n_calls) % 89
                started = (
                    f"2026-{9 + (day - 1) // 30:02d}-{1 + (day - 1) % 30:02d} "
                    f"{i % 24:02d}:{i % 60:02d}:00+00"
                )
                yield (
                    i,
                    f"call-{i:07d}",
                    versions[i % 2].pk,
                    f"{i:064x}",
                    f"/static/demo/audio/call-{i:07d}.ogg" if i % 20 == 0 else "",
                    "de" if i % 10 == 0 else "en",
                    f"live/scenario-{i % 50:02d}",
                    started,
                    now,
                    "{}",
                )

        counts["calls"] = copy_rows(
            raw,
            "evals_transcript",
            [
                "id",
                "external_id",
                "agent_version_id",
                "checksum",
                "audio_url",
                "language",
                "scenario",
                "started_at",
                "imported_at",
                "metadata",
            ],
            calls(),
        )

        def turns():
            tid = 0
            for t in range(1, n_calls + 2):
                count = 300 if t == long_call else n_turns
                for k in range(count):
                    tid += 1
                    yield (
                        tid,
                        t,
                        k,
                        "agent" if k % 2 == 0 else "user",
                        f"Turn {k} of call {t}.",
                        k * 4000,
                        k * 4000 + 3200,
                        0.95,
                        ["opening", "asking", "closing"][k * 3 // count],
                        "[]",
                        "",
                    )

        counts["turns"] = copy_rows(
            raw,
            Turn._meta.db_table,
            ["id", *TURN_COLUMNS],
            turns(),
        )

        def verdicts():
            vid = 0
            for t in range(1, n_calls + 2):
                turns_in_call = 300 if t == long_call else n_turns
                for rv in rvs:
                    vid += 1
                    flagged = rng.random() < 0.08
                    error = "timeout" if rng.random() < 0.01 else ""
                    turn = rng.randrange(turns_in_call) if flagged else None
                    yield (
                        vid,
                        t,
                        rv.pk,
                        judge.pk,
                        "t" if flagged else "f",
                        turn,
                        f"[{turn}]" if flagged else "[]",
                        "major" if flagged else "",
                        "A one-line rationale.",
                        rng.randint(50, 99),
                        error,
                        now,
                    )

        counts["verdicts"] = copy_rows(
            raw,
            "evals_verdict",
            [
                "id",
                "transcript_id",
                "rule_version_id",
                "judge_id",
                "flagged",
                "turn",
                "turns",
                "severity",
                "rationale",
                "confidence",
                "error",
                "created_at",
            ],
            verdicts(),
        )
        sequences_reset(cur, ("evals_transcript", "evals_turn", "evals_verdict"))
        cur.execute("VACUUM ANALYZE")
    counts["load_s"] = round(time.perf_counter() - t0, 1)
    counts["long_call"] = f"call-{long_call:07d}"
    counts["rule"] = rules[5].rule_id
    return counts


def main() -> None:
    url = postgres_url("browse_pages.py", "docket_bench_browse", DEDICATED)
    n_calls = int(os.environ.get("BENCH_CALLS", "100000"))
    n_rules = int(os.environ.get("BENCH_RULES", "25"))
    n_turns = int(os.environ.get("BENCH_TURNS", "10"))
    reuse = os.environ.get("BENCH_REUSE") == "1"
    with scratch_database(url, reuse=reuse) as db_url:
        django_setup(migrate=True, DATABASE_URL=db_url)
        from django.core.cache import cache
        from django.db import connection

        if reuse:
            from evals.catalog.models import Transcript
            from evals.rules.models import Rule

            n_calls = Transcript.objects.count() - 1
            counts = {
                "long_call": f"call-{n_calls + 1:07d}",
                "rule": Rule.objects.order_by("pk")[5].rule_id,
            }
            print(f"reusing {n_calls + 1:,} calls")
        else:
            print(
                f"loading {n_calls:,} calls x {n_turns} turns "
                f"x {n_rules} rule versions with COPY ...",
                flush=True,
            )
            counts = load(n_calls, n_rules, n_turns)
            print(counts_line(counts))
        client = bench_client("bench-lead", "lead")
        pages = [
            ("dashboard", "/"),
            ("calls, page 1", "/calls/"),
            ("calls, page 200 (offset 9,950)", "/calls/?page=200"),
            ("calls, last page", f"/calls/?page={(n_calls + 1 + 49) // 50}"),
            ("calls, flagged by one rule", f"/calls/?flagged_rule={counts['rule']}"),
            (
                "calls, language + audio + dates",
                "/calls/?language=de&has_audio=yes&started_from=2026-10-01&started_to=2026-10-31",
            ),
            ("calls, id search", "/calls/?q=0012345"),
            ("call page, 300 turns", f"/calls/{counts['long_call']}/"),
            ("call page, 10 turns", "/calls/call-0000042/"),
            ("rules", "/rules/"),
            ("one rule", f"/rules/{counts['rule']}/"),
            ("verdicts, page 1", "/verdicts/"),
            ("verdicts, one rule, flagged", f"/verdicts/?rule={counts['rule']}&flagged=yes"),
            ("verdicts, one call", "/verdicts/?transcript=call-0000042"),
            ("verdicts, errored, page 20", "/verdicts/?errored=yes&page=20"),
        ]
        print(f"{'page':42} {'cold s':>7} {'warm min':>9} {'warm med':>9} {'queries':>8}")
        for label, path in pages:
            client.get(path)  # templates, connections
            cache.clear()
            t0 = time.perf_counter()
            response = client.get(path)
            cold = time.perf_counter() - t0
            assert response.status_code == 200, (path, response.status_code)
            warm = timed_get(client, path, rounds=3)
            print(
                f"{label:42} {cold:7.3f} {warm.min:9.3f} {warm.median:9.3f} {warm.queries:8d}",
                flush=True,
            )
        connection.close()


if __name__ == "__main__":
    main()
