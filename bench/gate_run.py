"""Benchmark: one gate run (facts, decision, record) on a large golden set amid a busy database.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME names a database the benchmark may
create, fill and DROP (use a dedicated one, e.g. docket_bench_gate). It loads two agent versions
with one call per golden scenario, background calls that are not in the golden set, every gated
rule's verdict on every call, and turns with timings, all with COPY; then times `gate_run_evaluate`
(the baseline re-scored too) and the gate-run and history pages, and prints times and query counts.
Options: BENCH_SCENARIOS (default 500), BENCH_RULES (default 30), BENCH_TURNS (default 30),
BENCH_BACKGROUND (calls outside the golden set, default 20000), BENCH_KEEP=1 keeps the database.
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
    timed,
    timed_get,
)


def load(n_scenarios: int, n_rules: int, n_turns: int, n_background: int) -> dict:
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
    groups = ["opening", "asking", "acknowledging", "language", "requests", "boundaries", "closing"]
    rules = Rule.objects.bulk_create(
        [
            Rule(
                rule_id=f"{groups[i % 7]}.rule-{i:03d}",
                group=groups[i % 7],
                safety=(i % 10 == 5),
                severity=rng.choice(["minor", "major", "critical"]),
            )
            for i in range(n_rules)
        ]
    )
    rvs = RuleVersion.objects.bulk_create(
        [
            RuleVersion(rule=r, number=1, text=f"Rule {i}.", status="gated")
            for i, r in enumerate(rules)
        ]
    )
    judge = Judge.objects.create(name="gpt-4o-mini/conduct-v3", kind="llm")
    now = "2026-11-30 06:00:00+00"
    calls = []  # (id, external id, agent version, scenario)
    for v_i, av in enumerate(versions):
        for s in range(n_scenarios):
            calls.append(
                (len(calls) + 1, f"golden-{s:05d}-{av.version}", av.pk, f"golden/s-{s:05d}")
            )
    for b in range(n_background):
        calls.append((len(calls) + 1, f"call-{b:07d}", versions[b % 2].pk, ""))
    t0 = time.perf_counter()
    counts = {}
    with connection.cursor() as cur:
        raw = cur.cursor
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
            (
                (i, ext, av, f"{i:064x}", "", "en", sc, "2026-11-29 10:00:00+00", now, "{}")
                for i, ext, av, sc in calls
            ),
        )

        def turns():
            tid = 0
            for i, *_ in calls:
                t = 0
                for k in range(n_turns):
                    tid += 1
                    start = t + rng.randint(300, 2500)
                    end = start + rng.randint(1500, 9000)
                    t = end
                    yield (
                        tid,
                        i,
                        k,
                        "agent" if k % 2 == 0 else "user",
                        "",
                        start,
                        end,
                        0.95,
                        "",
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
            for i, *_ in calls:
                for rv, rule in zip(rvs, rules):
                    vid += 1
                    flagged = rng.random() < (0.0 if rule.safety else 0.03)
                    yield (
                        vid,
                        i,
                        rv.pk,
                        judge.pk,
                        "t" if flagged else "f",
                        3 if flagged else None,
                        "[3]" if flagged else "[]",
                        rule.severity if flagged else "",
                        "",
                        80,
                        "",
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
    counts["load_s"] = round(time.perf_counter() - t0, 1)
    return counts


def main() -> None:
    url = postgres_url("gate_run.py", "docket_bench_gate", DEDICATED)
    n_scenarios = int(os.environ.get("BENCH_SCENARIOS", "500"))
    n_rules = int(os.environ.get("BENCH_RULES", "30"))
    n_turns = int(os.environ.get("BENCH_TURNS", "30"))
    n_background = int(os.environ.get("BENCH_BACKGROUND", "20000"))
    with scratch_database(url) as db_url:
        django_setup(DATABASE_URL=db_url)
        from django.core.management import call_command
        from django.db import connection
        from django.test.utils import setup_test_environment

        from evals.catalog.selectors import agent_version_resolve
        from evals.gating import services as gating
        from evals.gating.models import Gate

        setup_test_environment()
        call_command("migrate", verbosity=0)
        print(
            f"loading {n_scenarios} golden scenarios x 2 versions + {n_background} other calls, "
            f"{n_rules} gated rules, {n_turns} turns a call ...",
            flush=True,
        )
        counts = load(n_scenarios, n_rules, n_turns, n_background)
        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE")
        print(counts_line(counts))
        golden = gating.golden_set_create(
            name="bench", members=[f"golden/s-{s:05d}" for s in range(n_scenarios)]
        )
        gate, _ = gating.gate_save(
            name="release",
            golden_set=golden,
            metrics=[
                {"kind": "safety_ceiling"},
                {"kind": "violation_rate", "group": "asking", "max": 0.1},
                {"kind": "detector_metric", "measure": "silence_p95_ms", "max": 3000},
                {"kind": "detector_metric", "measure": "talk_over_count", "max": 1000},
                {
                    "kind": "judge_score_regression",
                    "score": "weighted_violations",
                    "tolerance": 0.5,
                },
            ],
        )
        gate = Gate.objects.select_related("golden_set", "judge").get(pk=gate.pk)
        cand = agent_version_resolve("2026-11-28.1")
        base = agent_version_resolve("2026-11-21.1")

        timing = timed(
            lambda i: gating.gate_run_evaluate(
                gate=gate, candidate=cand, baseline=base, by="bench"
            ),
            rounds=5,
        )
        run = timing.result
        checks = sum(m["n"] for m in run.results["metrics"] if m["kind"] != "detector_metric")
        print(
            f"gate run ({n_scenarios} calls + baseline, {n_rules} rule versions, "
            f"{checks:,} checks): min {timing.min:.3f} s, median "
            f"{timing.median:.3f} s, {timing.queries} queries; status {run.status}"
        )

        client = bench_client("bench-lead", "lead")
        for label, path in (
            ("gate-run page", f"/gates/runs/{run.pk}/"),
            ("history page", "/gates/release/history/"),
            ("gate page", "/gates/release/"),
            ("gates index", "/gates/"),
        ):
            page = timed_get(client, path, rounds=5)
            print(
                f"{label:14} min {page.min * 1000:.0f} ms, median {page.median * 1000:.0f} ms, "
                f"{page.queries} queries"
            )
        connection.close()


if __name__ == "__main__":
    main()
