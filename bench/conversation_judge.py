"""Benchmark: the conversation judge. Prints figures; asserts nothing about speed.

1. A conversation judge run, eager and in-process, over BENCH_CALLS synthetic calls (default 300,
   24 turns in 5 phases each) against a local chat-completions server that answers at once: the
   runner's own overhead per whole-call judgement (prompt, schema, parse, score and two verdicts).
   Then a dry run (planning, cache look-up and estimate) and a second run, all cache hits.
2. The pure gate decision of the conversation score over BENCH_SCENARIOS golden scenarios
   (default 2,000) for a candidate and a baseline, with its noise.

Uses a throwaway SQLite database in a temporary folder (set BENCH_DATABASE_URL=postgres://... to
use a dedicated PostgreSQL database instead; its tables are created and left behind).
"""

import os
import random
import statistics
import time

from support import judge_bench_setup

CALLS = int(os.environ.get("BENCH_CALLS", "300"))
SCENARIOS = int(os.environ.get("BENCH_SCENARIOS", "2000"))
TURNS = 24
PHASES = (
    ["opening"] * 2 + ["background"] * 6 + ["project"] * 8 + ["questions"] * 4 + ["closing"] * 4
)


def bench_gate_decision() -> None:
    from evals.gating import decision as g

    rng = random.Random(13)
    names = [f"golden/s-{i:05d}" for i in range(SCENARIOS)]
    golden = g.GoldenFacts("bench", "x", "x", tuple(g.MemberFact(s) for s in names))

    def calls(version, drop):
        return {
            s: g.CallFacts(
                call=f"{version}-{i}",
                scenario=s,
                conversation=g.ConversationFact(
                    score=max(1, min(10, rng.choice([8, 9, 9, 10]) - drop))
                ),
            )
            for i, s in enumerate(names)
        }

    base, cand = calls("v1", 0), calls("v2", 0)
    spec = g.MetricSpec(g.CONVERSATION_SCORE, tolerance=0.5)
    start = time.perf_counter()
    d = g.gate_decide(golden=golden, rules={}, metrics=[spec], candidate=cand, baseline=base)
    elapsed = time.perf_counter() - start
    m = d.metrics[0]
    lo, hi = m.noise["interval"]
    print(
        f"gate decision: conversation score, {SCENARIOS:,} scenarios, {elapsed * 1000:.1f} ms; "
        f"{m.value:.3f} vs baseline {m.baseline:.3f}, per-call difference sd {m.noise['sd']:.2f}, "
        f"mean's 95% interval [{lo:+.3f}, {hi:+.3f}] -> {'pass' if m.passed else 'fail'}"
    )


def main() -> None:
    bench_gate_decision()
    fake = judge_bench_setup("docket-bench-conversation-")
    fake.conversation_findings = [{"type": "loop", "turns": [10], "note": "Asks it again."}]
    from django.core.management import call_command
    from django.db import connection

    from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
    from evals.conversation.models import ConversationScore
    from evals.conversation.services import agent_plan_set, conversation_judge_create
    from evals.judging.models import Verdict

    call_command("migrate", verbosity=0)
    av = AgentVersion.objects.create(agent=Agent.objects.create(name="bench"), version="v1")
    agent_plan_set(agent="bench", phases=list(dict.fromkeys(PHASES)))
    transcripts = Transcript.objects.bulk_create(
        [
            Transcript(external_id=f"call-{i:06d}", agent_version=av, checksum=f"{i:064x}")
            for i in range(CALLS)
        ]
    )
    Turn.objects.bulk_create(
        [
            Turn(
                transcript=t,
                index=j,
                speaker="agent" if j % 2 == 0 else "user",
                phase=PHASES[j],
                text="Could you tell me about a project you led "
                "last year and what you learned from it?",
                start_ms=j * 6000,
                end_ms=j * 6000 + 5000,
            )
            for t in transcripts
            for j in range(TURNS)
        ],
        batch_size=5000,
    )
    print(f"conversation judge: {CALLS} calls x {TURNS} turns in 5 phases, {connection.vendor}")
    start = time.perf_counter()
    plan = conversation_judge_create(dry_run=True)
    print(
        f"  dry run: {plan.calls:,} calls planned, estimated {plan.est_tokens_in:,} tokens in, "
        f"{plan.est_tokens_out:,} out, ${plan.est_cost:.4f}, in {time.perf_counter() - start:.2f} s"
    )
    for label in ("first run (every call made)", "second run (all cache hits)"):
        before = len(fake.requests)
        start = time.perf_counter()
        run = conversation_judge_create(started_by="bench")
        elapsed = time.perf_counter() - start
        run.refresh_from_db()
        print(
            f"  {label}: {run.tasks_total:,} items ({run.calls_made:,} calls, "
            f"{run.cache_hits:,} cache hits) in {elapsed:.2f} s = "
            f"{run.tasks_total / elapsed:,.0f} calls judged/s, "
            f"{elapsed / max(1, run.tasks_total) * 1000:.1f} ms each; "
            f"{len(fake.requests) - before:,} HTTP requests; status {run.status}"
        )
    sizes = [sum(len(m["content"]) for m in r["body"]["messages"]) for r in fake.requests]
    print(
        f"  prompt size: median {statistics.median(sizes):,.0f} characters; stored: "
        f"{ConversationScore.objects.count():,} scores, {Verdict.objects.count():,} verdicts "
        f"({Verdict.objects.filter(flagged=True).count():,} flagged)"
    )
    fake.stop()


if __name__ == "__main__":
    main()
