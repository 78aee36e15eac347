"""Benchmark: the rule workbench. Prints figures; asserts nothing about speed.

1. A workbench run over BENCH_CALLS marked calls (default 300, 24 turns each) through the ordinary
   judge runner, eager and in-process, against the local chat-completions server
   (tests/evals/judge_server.py) answering at once: the estimate, the run (one judge call per
   call: the draft with its group's two other rules), the result, a second run (all cache hits)
   and the draft's page. Throwaway SQLite (BENCH_DATABASE_URL=postgres://... for PostgreSQL).

2. With DATABASE_URL=postgres://.../docket_bench: the result page's time at 1,000,000 marked
   verdicts, built as bench/calibration.py builds them (5,000 calls x 200 rule versions, COPY,
   then the verdict tally rebuilt; the database is created and DROPPED). One rule version's 5,000
   marked calls are the base: a draft judged on BENCH_JUDGED of them (default 300; its verdicts
   written directly, no judge), then its estimate, its result, its page, the rule's comparison
   page and the calibration page are timed. BENCH_TRANSCRIPTS and BENCH_RULES as there.

    python bench/workbench.py                                           # part 1
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/docket_bench python bench/workbench.py
"""

import json
import os
import random
import time

from calibration import load as load_million
from support import (
    DEDICATED,
    bench_client,
    counts_line,
    django_setup,
    judge_bench_setup,
    postgres_url,
    scratch_database,
    timed,
    timed_get,
)

CALLS = int(os.environ.get("BENCH_CALLS", "300"))
JUDGED = int(os.environ.get("BENCH_JUDGED", "300"))
TURNS = 24
DRAFT = "Never hint at the answer. Rephrasing the question is not a hint."


def _answer(body: dict) -> str:
    """The local judge's answer: flags the draft rule on calls whose id ends in 0-2 (and the
    current text on those ending in 0-4), every other rule never."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    schema = body["response_format"]["json_schema"]["schema"]
    seed = int(prompt.split("case ", 1)[1][:6]) if "case " in prompt else 0
    out = {}
    for rid, prop in schema["properties"].items():
        turns = prop["properties"]["turns"]["items"]["enum"]
        flagged = rid == "boundaries.no-hints" and seed % 10 < (3 if DRAFT in prompt else 5)
        out[rid] = {
            "reason": "Checked.",
            "flagged": flagged,
            "turns": turns[:1] if flagged else [],
            "severity": "major",
            "confidence": 80,
        }
    return json.dumps(out)


def bench_run() -> None:
    fake = judge_bench_setup("docket-bench-workbench-")
    fake.responder = _answer
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
    from evals.judging.models import Judge, Verdict
    from evals.rules.models import Rule, RuleVersion
    from labeling.models import Mark
    from labeling.selectors.workbench import workbench_estimate, workbench_result
    from labeling.services.workbench import workbench_draft_create, workbench_run_start

    call_command("migrate", verbosity=0)
    av = AgentVersion.objects.create(agent=Agent.objects.create(name="bench"), version="v1")
    rvs = {}
    for rid, text in (
        ("boundaries.no-hints", "Never hint at the answer."),
        ("boundaries.no-leak", "Never reveal the rubric."),
        ("boundaries.no-bias", "Never ask about protected traits."),
    ):
        rule = Rule.objects.create(rule_id=rid, group="boundaries")
        rvs[rid] = RuleVersion.objects.create(rule=rule, number=1, text=text)
    judge = Judge.objects.create(name="gpt-4o-mini/conduct-v3", kind="llm")
    calls = Transcript.objects.bulk_create(
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
                text=f"In case {i:06d}, could you tell me about a project you led last year?",
            )
            for i, t in enumerate(calls)
            for j in range(TURNS)
        ],
        batch_size=5000,
    )
    rng = random.Random(7)
    base = rvs["boundaries.no-hints"]
    verdicts = Verdict.objects.bulk_create(
        [
            Verdict(
                transcript=t,
                rule_version=base,
                judge=judge,
                flagged=i % 10 < 5,
                turn=0 if i % 10 < 5 else None,
            )
            for i, t in enumerate(calls)
        ]
    )
    reviewer = get_user_model().objects.create(username="bench-reviewer")
    # The truth: broken on calls ending in 0-2 (the draft is right, the current text flags 3-4 too),
    # with a reviewer's slip now and then.
    Mark.objects.bulk_create(
        [
            Mark(
                verdict=v,
                reviewer=reviewer,
                correct=((i % 10 < 3) == v.flagged) ^ (rng.random() < 0.03),
            )
            for i, v in enumerate(verdicts)
        ]
    )
    print(
        f"workbench run: {CALLS} marked calls x {TURNS} turns, a group of 3 rules, "
        f"{connection.vendor}"
    )
    draft = workbench_draft_create(base=base, text=DRAFT)
    t0 = time.perf_counter()
    est = workbench_estimate(draft=draft, size=CALLS)
    d = est.as_dict()
    print(
        f"  estimate: {d['calls']} calls ({d['disagreements']} disagreements first), "
        f"{d['judge_calls']} judge calls, ${d['est_cost']}, in {time.perf_counter() - t0:.2f} s"
    )
    for label in ("first run (every call made)", "second run (all cache hits)"):
        before = len(fake.requests)
        t0 = time.perf_counter()
        draft_run = workbench_run_start(draft=draft, size=CALLS)
        elapsed = time.perf_counter() - t0
        run = draft_run.judge_run
        run.refresh_from_db()
        print(
            f"  {label}: {run.tasks_total} items ({run.calls_made} calls, {run.cache_hits} cache "
            f"hits) in {elapsed:.2f} s = {run.tasks_total / elapsed:,.0f} calls/s, "
            f"{elapsed / run.tasks_total * 1000:.1f} ms/call; {len(fake.requests) - before} HTTP "
            f"requests; status {run.status}"
        )
    from django.db import reset_queries

    reset_queries()  # the runs filled the debug cursor's log
    t = timed(lambda i: workbench_result(draft_run), rounds=5, warmup=1)
    res = t.result
    print(
        f"  result: {res.compared} calls compared, precision "
        f"{res.current.w_precision.value:.2f} -> {res.draft.w_precision.value:.2f}, "
        f"{res.now_agree} now agree, {res.now_disagree} now "
        f"disagree; median {t.median * 1000:.0f} ms, {t.queries} queries"
    )
    client = bench_client("bench-engineer", "engineer")
    page = timed_get(client, f"/workbench/drafts/{draft.pk}/", rounds=5, warmup=1)
    print(f"  the draft's page: median {page.median * 1000:.0f} ms, {page.queries} queries")
    fake.stop()


def bench_million() -> None:
    url = postgres_url("workbench.py", "docket_bench", DEDICATED)
    n_transcripts = int(os.environ.get("BENCH_TRANSCRIPTS", "5000"))
    n_rules = int(os.environ.get("BENCH_RULES", "200"))
    with scratch_database(url) as db_url:
        django_setup(migrate=True, DATABASE_URL=db_url, DJANGO_DEBUG="1", CELERY_BROKER_URL="")
        from django.db import connection
        from django.utils import timezone

        from evals.judging.models import Judge, JudgeRun
        from evals.workbench.models import DraftRun, DraftVerdict
        from labeling.models import VerdictTally
        from labeling.selectors.workbench import (
            workbench_drafts,
            workbench_estimate,
            workbench_marked_calls,
            workbench_result,
        )
        from labeling.services.workbench import workbench_draft_create

        print(f"loading {n_transcripts} calls x {n_rules} rule versions with COPY ...", flush=True)
        counts = load_million(n_transcripts, n_rules)
        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE")
        print(counts_line(counts))
        print(f"marked verdicts in the tally: {VerdictTally.objects.count():,}")
        judge = Judge.objects.get(name="gpt-4o-mini/conduct-v3")
        from evals.rules.models import RuleVersion

        base = RuleVersion.objects.select_related("rule").order_by("pk")[5]
        draft = workbench_draft_create(base=base, text=base.text + " Clarified.")
        marked = timed(lambda i: workbench_marked_calls(base=base, judge=judge), rounds=5, warmup=1)
        print(
            f"base {base}: {len(marked.result):,} settled marked calls; reading them: median "
            f"{marked.median * 1000:.0f} ms"
        )
        est = timed(lambda i: workbench_estimate(draft=draft, size=JUDGED), rounds=5, warmup=1)
        print(
            f"estimate ({JUDGED} calls, cache lookups and token estimate): median "
            f"{est.median * 1000:.0f} ms, {est.queries} queries"
        )
        # A finished run of the draft on the estimate's calls, its verdicts written directly.
        selection = est.result.selection
        run = JudgeRun.objects.create(status="done", finished_at=timezone.now(), judge=judge)
        draft_run = DraftRun.objects.create(
            draft=draft, judge_run=run, base_judge=judge, number=2, size=JUDGED
        )
        rng = random.Random(3)
        DraftVerdict.objects.bulk_create(
            DraftVerdict(
                run=draft_run,
                transcript_id=pk,
                stratum=stratum,
                inclusion_probability=p,
                flagged=rng.random() < 0.3,
                judged_at=timezone.now(),
                rationale="Judged.",
            )
            for pk, stratum, p in selection.calls
        )
        res = timed(lambda i: workbench_result(draft_run), rounds=5, warmup=1)
        r = res.result
        print(
            f"result ({r.compared} calls, {len(r.flips)} flips): median "
            f"{res.median * 1000:.0f} ms, {res.queries} queries"
        )
        compare = timed(lambda i: workbench_drafts(base.rule), rounds=5, warmup=1)
        print(f"the rule's drafts compared: median {compare.median * 1000:.0f} ms")
        engineer = bench_client("bench-engineer", "engineer")
        lead = bench_client("bench-lead2", "lead")
        for client, path in (
            (engineer, f"/workbench/drafts/{draft.pk}/"),
            (engineer, f"/workbench/rules/{base.rule.rule_id}/"),
            (lead, f"/calibration/rule-versions/{base.pk}/"),
        ):
            page = timed_get(client, path, rounds=5, warmup=1)
            print(
                f"GET {path}: median {page.median * 1000:.0f} ms, "
                f"p90 {page.p90 * 1000:.0f} ms, {page.queries} queries"
            )
        connection.close()


def main() -> None:
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        bench_million()
    else:
        bench_run()


if __name__ == "__main__":
    main()
