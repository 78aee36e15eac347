"""Benchmark: the judge runner. Prints figures; asserts nothing about speed.

1. The eight detectors (pure functions) over the tau-bench
   airline trajectories, when the file is there.
2. A judge run, eager and in-process, over BENCH_CALLS synthetic calls (default 300, 24 turns each)
   with 4 LLM rule groups and 3 detector rules, against a local chat-completions server that answers
   at once: the runner's own overhead per call (prompt, schema, parse, verdict writes, counters).
   Then a dry run (planning and estimate) and a second run, all cache hits.

Uses a throwaway SQLite database in a temporary folder (set BENCH_DATABASE_URL=postgres://... to
use a dedicated PostgreSQL database instead; its tables are created and left behind).
"""

import json
import os
import statistics
import time

from support import ROOT, judge_bench_setup

TAU = ROOT.parent / "shared" / "datasets" / "tau-bench-airline" / "gpt-4o-airline.json"
CALLS = int(os.environ.get("BENCH_CALLS", "300"))
TURNS = 24


def bench_detectors() -> None:
    from evals.rules.detectors import DETECTORS, TurnView, detector_run

    if not TAU.exists():
        print(f"detectors: skipped, no tau-bench file at {TAU}")
        return
    convs = []
    for item in json.loads(TAU.read_text()):
        turns = []
        for i, m in enumerate(item["traj"]):
            speaker = {"assistant": "agent", "user": "user", "tool": "tool", "system": "system"}[
                m["role"]
            ]
            turns.append(TurnView(index=i, speaker=speaker, text=m.get("content") or ""))
        convs.append(turns)
    n_turns = sum(len(c) for c in convs)
    start = time.perf_counter()
    flagged = {name: 0 for name in DETECTORS}
    for turns in convs:
        for name in DETECTORS:
            flagged[name] += detector_run({"name": name}, turns).flagged
    elapsed = time.perf_counter() - start
    print(
        f"detectors: 8 detectors x {len(convs)} tau-bench conversations ({n_turns:,} "
        f"turns) in {elapsed:.3f} s = {len(convs) * 8 / elapsed:,.0f} checks/s"
    )
    print("  flagged with default parameters: " + ", ".join(f"{k} {v}" for k, v in flagged.items()))


def main() -> None:
    bench_detectors()

    fake = judge_bench_setup("docket-bench-judge-")
    from django.core.management import call_command
    from django.db import connection

    from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
    from evals.judging.models import Verdict
    from evals.judging.services.runs import judge_run_create
    from evals.rules.models import Rule, RuleVersion

    call_command("migrate", verbosity=0)
    av = AgentVersion.objects.create(agent=Agent.objects.create(name="bench"), version="v1")
    rules = [
        ("opening.greet", "opening", "opening", "Greet the candidate once, by name.", None),
        ("asking.one-question", "asking", "", "Ask one question per turn.", None),
        ("asking.no-hints", "asking", "", "Never hint at the answer.", None),
        ("boundaries.no-leak", "boundaries", "", "Never reveal the rubric.", None),
        ("closing.thanks", "closing", "closing", "Thank the candidate.", None),
        (
            "signals.silence",
            "signals",
            "",
            "Answer within 3 s.",
            {"name": "silence_before_agent", "max_ms": 3000},
        ),
        (
            "signals.talk-over",
            "signals",
            "",
            "No talk-over.",
            {"name": "talk_over", "max_overlap_ms": 500},
        ),
        ("signals.markdown", "signals", "", "No markdown.", {"name": "markdown_or_emoji"}),
    ]
    for rid, group, phase, text, det in rules:
        rule = Rule.objects.create(rule_id=rid, group=group, phase=phase, detector=det)
        RuleVersion.objects.create(rule=rule, number=1, text=text, detector=det)
    transcripts = Transcript.objects.bulk_create(
        [
            Transcript(external_id=f"call-{i:06d}", agent_version=av, checksum=f"{i:064x}")
            for i in range(CALLS)
        ]
    )
    phases = ["opening"] * 4 + ["asking"] * 16 + ["closing"] * 4
    Turn.objects.bulk_create(
        [
            Turn(
                transcript=t,
                index=j,
                speaker="agent" if j % 2 == 0 else "user",
                phase=phases[j],
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
    print(
        f"judge run: {CALLS} calls x {TURNS} turns, 5 LLM rules in 4 "
        f"groups (2 phase-scoped) + 3 detector rules, {connection.vendor}"
    )

    start = time.perf_counter()
    plan = judge_run_create(dry_run=True)
    print(
        f"  dry run: {plan.calls:,} calls planned, estimated {plan.est_tokens_in:,} tokens in, "
        f"${plan.est_cost:.4f}, in {time.perf_counter() - start:.2f} s"
    )

    for label in ("first run (every call made)", "second run (all cache hits)"):
        before = len(fake.requests)
        start = time.perf_counter()
        run = judge_run_create(started_by="bench")
        elapsed = time.perf_counter() - start
        run.refresh_from_db()
        per_item = elapsed / max(1, run.tasks_total) * 1000
        print(
            f"  {label}: {run.tasks_total:,} items ({run.calls_made:,} calls, "
            f"{run.cache_hits:,} cache hits) in {elapsed:.2f} s = "
            f"{run.tasks_total / elapsed:,.0f} items/s, {per_item:.1f} ms/item; "
            f"{len(fake.requests) - before:,} HTTP requests; status {run.status}"
        )
    sizes = [sum(len(m["content"]) for m in r["body"]["messages"]) for r in fake.requests]
    print(
        f"  prompt size: median {statistics.median(sizes):,.0f} characters; "
        f"verdicts stored: {Verdict.objects.count():,}"
    )
    bench_hanging_judge(fake, transcripts[:HANG_CALLS])
    fake.stop()


HANG_CALLS = int(os.environ.get("BENCH_HANG_CALLS", "5"))


def bench_hanging_judge(fake, transcripts) -> None:
    """A judge that never answers: the run's time without the circuit breaker and with it."""
    from django.conf import settings

    from evals.judging.models import JudgeCacheEntry, Verdict
    from evals.judging.services.runs import judge_run_create

    settings.JUDGE_TIMEOUT_S, settings.JUDGE_MAX_RETRIES = 0.3, 1
    fake.mode, fake.hang_s = "hang", 5.0
    ids = [t.external_id for t in transcripts]
    print(
        f"a judge that hangs: {len(ids)} calls x 4 groups, timeout "
        f"{settings.JUDGE_TIMEOUT_S} s x {settings.JUDGE_MAX_RETRIES + 1} tries each"
    )
    for breaker in (0, 5):
        settings.JUDGE_BREAKER_FAILURES = breaker
        Verdict.objects.filter(transcript__external_id__in=ids).delete()
        JudgeCacheEntry.objects.all().delete()
        before = len(fake.requests)
        start = time.perf_counter()
        run = judge_run_create(transcript_ids=ids, started_by="bench")
        elapsed = time.perf_counter() - start
        run.refresh_from_db()
        label = f"JUDGE_BREAKER_FAILURES={breaker}" + (" (no breaker)" if not breaker else "")
        print(
            f"  {label:36} {elapsed:6.1f} s, {run.calls_made} calls "
            f"({len(fake.requests) - before} HTTP requests), status {run.status}"
        )
    fake.mode = ""


if __name__ == "__main__":
    main()
