"""Benchmark: the calibration page's one aggregate
over 1,000,000 marked verdicts and 200 rule versions.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME names a database the benchmark may
create, fill and DROP (use a dedicated one, e.g. docket_bench). It loads the data with COPY, times
the calibration selector (the SQL aggregate plus the figures in Python) and, in the same run, a
hand-written SQL query of the same counts, checks both agree, prints the figures, and drops the
database. The rows are COPYed with triggers off (session_replication_role = replica), so the verdict
tally is built afterwards by `verdict_tally_rebuild`, whose time is printed too; the same aggregate
straight from the marks (the path before the tally) is timed beside it, and so is `mark_set` with
its tally trigger. Options: BENCH_TRANSCRIPTS (default 5000), BENCH_RULES (default 200),
BENCH_KEEP=1 to keep the database afterwards, BENCH_REUSE=1 to time a kept database again without
loading.
"""

import os
import random
import statistics
import time
from pathlib import Path

from support import (
    DEDICATED,
    copy_rows,
    counts_line,
    django_setup,
    postgres_url,
    scratch_database,
    sequences_reset,
)

HAND_SQL = """
WITH per_verdict AS (
    SELECT v.id, v.rule_version_id, v.judge_id, v.flagged, v.error <> '' AS errored,
           count(*) FILTER (WHERE m.correct) AS rights,
           count(*) FILTER (WHERE NOT m.correct) AS wrongs,
           max(si.inclusion_probability) AS p
    FROM evals_verdict v
    JOIN labeling_mark m ON m.verdict_id = v.id
    LEFT JOIN labeling_assignment a ON a.id = m.assignment_id
    LEFT JOIN labeling_sampleitem si ON si.id = a.item_id
    GROUP BY v.id
), resolved AS (
    SELECT pv.*, CASE WHEN s.correct IS NOT NULL THEN s.correct
                      WHEN rights > wrongs THEN true WHEN wrongs > rights THEN false END AS truth,
           coalesce(1 / p, 1) AS w
    FROM per_verdict pv LEFT JOIN labeling_settlement s ON s.verdict_id = pv.id
)
SELECT rule_version_id, judge_id,
       count(*) FILTER (WHERE NOT errored AND flagged AND truth) AS tp,
       count(*) FILTER (WHERE NOT errored AND flagged AND NOT truth) AS fp,
       count(*) FILTER (WHERE NOT errored AND NOT flagged AND NOT truth) AS fn,
       count(*) FILTER (WHERE NOT errored AND NOT flagged AND truth) AS tn,
       count(*) FILTER (WHERE NOT errored AND truth IS NULL) AS waiting,
       count(*) FILTER (WHERE errored) AS errored,
       sum(w) FILTER (WHERE NOT errored AND flagged AND truth) AS w_tp
FROM resolved
GROUP BY rule_version_id, judge_id
"""


def database_exists(url: str) -> bool:
    """Return whether the database in `url` exists (BENCH_REUSE times a kept one again)."""
    import psycopg

    try:
        psycopg.connect(url).close()
    except psycopg.OperationalError:
        return False
    return True


def load(n_transcripts: int, n_rules: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from evals.catalog.models import Agent, AgentVersion
    from evals.judging.models import Judge
    from evals.rules.models import Rule, RuleVersion

    rng = random.Random(20261130)
    User = get_user_model()
    reviewers = User.objects.bulk_create([User(username=f"bench-rev{i}") for i in range(20)])
    lead = User.objects.create(username="bench-lead")
    agent = Agent.objects.create(name="phone-screen")
    av = AgentVersion.objects.create(agent=agent, version="2026-11-28.1")
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
            RuleVersion(rule=r, number=1, text=f"Rule text {i}.", status="candidate")
            for i, r in enumerate(rules)
        ]
    )
    judge = Judge.objects.create(name="gpt-4o-mini/conduct-v3", kind="llm")
    # Each rule version has its own judge quality, so the counts differ between rows.
    quality = {rv.pk: (rng.uniform(0.05, 0.4), rng.uniform(0.75, 0.99)) for rv in rvs}
    now = "2026-11-30 06:00:00+00"
    t0 = time.perf_counter()
    counts = {}
    with connection.cursor() as cur:
        raw = cur.cursor
        # Triggers off while COPYing (the tally's would
        # recount per mark); the tally is rebuilt below.
        cur.execute("SET session_replication_role = replica")
        counts["transcripts"] = copy_rows(
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
                "tenant",
                "started_at",
                "imported_at",
                "metadata",
            ],
            (
                (
                    i,
                    f"call-{i:07d}",
                    av.pk,
                    f"{i:064x}",
                    "",
                    "en",
                    "",
                    "",
                    f"2026-{9 + (i * 3 // n_transcripts)}-{1 + (i % 28):02d} 10:00:00+00",
                    now,
                    "{}",
                )
                for i in range(1, n_transcripts + 1)
            ),
        )
        days = 50
        copy_rows(
            raw,
            "labeling_dailysample",
            ["id", "day", "size", "params", "created_at"],
            (
                (
                    d,
                    f"2026-10-{1 + d % 28:02d}" if d < 28 else f"2026-11-{1 + d % 28:02d}",
                    100,
                    "{}",
                    now,
                )
                for d in range(1, days + 1)
            ),
        )
        # 95% of the calls came through a sample (uniform
        # p=0.02 or judge check p=0.5/0.9), 5% outside.
        items, assignments, reviewers_of = [], [], {}
        a_id = 0
        for t in range(1, n_transcripts + 1):
            if rng.random() < 0.05:
                reviewers_of[t] = [(rng.choice(reviewers).pk, None)]
                continue
            p = rng.choice([0.02, 0.02, 0.5, 0.9])
            items.append((t, 1 + t % days, t, "uniform" if p == 0.02 else "judge_check", p, 1, now))
            chosen = rng.sample(reviewers, 2 if rng.random() < 0.1 else 1)
            reviewers_of[t] = []
            for r in chosen:
                a_id += 1
                assignments.append((a_id, t, r.pk, now, now, now))
                reviewers_of[t].append((r.pk, a_id))
        counts["sample_items"] = copy_rows(
            raw,
            "labeling_sampleitem",
            [
                "id",
                "sample_id",
                "transcript_id",
                "reason",
                "inclusion_probability",
                "reviews_needed",
                "created_at",
            ],
            items,
        )
        copy_rows(
            raw,
            "labeling_assignment",
            ["id", "item_id", "reviewer_id", "claimed_at", "lease_expires_at", "finished_at"],
            assignments,
        )

        def judged(t: int):
            """Yield (verdict row, its mark rows) for call t; the same every time it is called."""
            r_t = random.Random(t)
            for k, rv in enumerate(rvs):
                vid = (t - 1) * len(rvs) + k + 1
                base_rate, accuracy = quality[rv.pk]
                flagged = r_t.random() < base_rate
                error = "timeout" if r_t.random() < 0.01 else ""
                right = r_t.random() < accuracy
                marks = []
                for j, (r_pk, assignment) in enumerate(reviewers_of[t]):
                    # A second reviewer agrees with the first 85% of the time.
                    correct = right if j == 0 or r_t.random() < 0.85 else not right
                    marks.append((vid, r_pk, "t" if correct else "f", "", assignment, now, now))
                yield (
                    (
                        vid,
                        t,
                        rv.pk,
                        judge.pk,
                        "t" if flagged else "f",
                        0 if flagged else None,
                        "[]",
                        "",
                        "",
                        80,
                        error,
                        now,
                    ),
                    marks,
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
            (v for t in range(1, n_transcripts + 1) for v, _ in judged(t)),
        )
        counts["marks"] = copy_rows(
            raw,
            "labeling_mark",
            [
                "verdict_id",
                "reviewer_id",
                "correct",
                "note",
                "assignment_id",
                "created_at",
                "updated_at",
            ],
            (m for t in range(1, n_transcripts + 1) for _, ms in judged(t) for m in ms),
        )
        vid = n_transcripts * len(rvs)
        settled = rng.sample(range(1, vid + 1), 300)
        counts["settlements"] = copy_rows(
            raw,
            "labeling_settlement",
            ["verdict_id", "correct", "settled_by_id", "reason", "settled_at"],
            ((v, rng.choice("tf"), lead.pk, "", now) for v in settled),
        )
        sequences_reset(
            cur,
            (
                "evals_transcript",
                "labeling_dailysample",
                "labeling_sampleitem",
                "labeling_assignment",
                "evals_verdict",
            ),
        )
        cur.execute("SET session_replication_role = origin")
    counts["load_s"] = round(time.perf_counter() - t0, 1)
    from labeling.services.tally import verdict_tally_rebuild

    t0 = time.perf_counter()
    counts["tally_rows"] = verdict_tally_rebuild()
    counts["tally_rebuild_s"] = round(time.perf_counter() - t0, 1)
    return counts


def backend_cpu_s() -> float | None:
    """Return the CPU seconds PostgreSQL's backend for
    this connection has used (local server only)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = cur.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(fn, repeat: int = 5) -> tuple[float, float, object, float | None]:
    """Return min and median wall seconds, the result, and the median backend CPU seconds."""
    fn()  # warm the cache
    times, cpus, result = [], [], None
    for _ in range(repeat):
        c0 = backend_cpu_s()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        c1 = backend_cpu_s()
        if c0 is not None and c1 is not None:
            cpus.append(c1 - c0)
    return min(times), statistics.median(times), result, (statistics.median(cpus) if cpus else None)


def main() -> None:
    url = postgres_url("calibration.py", "docket_bench", DEDICATED)
    n_transcripts = int(os.environ.get("BENCH_TRANSCRIPTS", "5000"))
    n_rules = int(os.environ.get("BENCH_RULES", "200"))
    reuse = os.environ.get("BENCH_REUSE") == "1" and database_exists(url)
    with scratch_database(url, reuse=reuse) as db_url:
        django_setup(migrate=not reuse, DATABASE_URL=db_url)
        from django.db import connection

        from labeling.selectors.calibration import calibration_counts, calibration_rows

        if reuse:
            print(f"reusing the data already in {connection.settings_dict['NAME']} (BENCH_REUSE=1)")
        else:
            print(
                f"loading {n_transcripts} calls x {n_rules} rule versions with COPY ...", flush=True
            )
            counts = load(n_transcripts, n_rules)
            with connection.cursor() as cur:
                cur.execute("VACUUM ANALYZE")
            print(counts_line(counts))

        def hand():
            with connection.cursor() as cur:
                cur.execute(HAND_SQL)
                return cur.fetchall()

        from evals.rules.models import RuleVersion
        from labeling.selectors.calibration import calibration_row

        sel_min, sel_med, rows, sel_cpu = timed(calibration_rows)
        agg_min, agg_med, _, agg_cpu = timed(calibration_counts)
        marks_min, marks_med, _, marks_cpu = timed(
            lambda: calibration_counts(from_marks=True), repeat=3
        )
        one_min, one_med, _, one_cpu = timed(lambda: calibration_rows(group="boundaries"))
        rv = RuleVersion.objects.order_by("pk").first()
        rv_min, rv_med, _, rv_cpu = timed(lambda: calibration_row(rule_version=rv))
        hand_min, hand_med, hand_rows, hand_cpu = timed(hand)
        load1 = os.getloadavg()[0]

        by_key = {(r.rule_version.pk, r.judge.pk): r.counts for r in rows if r.judge}
        mismatches = 0
        for rv_id, judge_id, tp, fp, fn, tn, waiting, errored, w_tp in hand_rows:
            c = by_key[(rv_id, judge_id)]
            if (c.tp, c.fp, c.fn, c.tn, c.waiting, c.errored) != (
                tp,
                fp,
                fn,
                tn,
                waiting,
                errored,
            ) or abs(c.w["tp"] - float(w_tp or 0)) > 1e-6:
                mismatches += 1
        marked = sum(c.marked + c.waiting + c.errored for c in by_key.values())
        print(f"rows: {len(rows)} (rule version, judge); marked verdicts counted: {marked:,}")

        def cpu(x):
            return f", PostgreSQL CPU {x:.3f} s" if x is not None else ""

        print(
            f"machine: {os.cpu_count()} cores, load average "
            f"{load1:.1f} while timing (wall times include waiting)"
        )
        print(
            "calibration selector, all rows (SQL + figures): min "
            f"{sel_min:.3f} s, median {sel_med:.3f} s{cpu(sel_cpu)}"
        )
        print(
            "  of which the SQL aggregate (verdict tally):    min "
            f"{agg_min:.3f} s, median {agg_med:.3f} s{cpu(agg_cpu)}"
        )
        print(
            "the same aggregate from the marks (no tally):   min "
            f"{marks_min:.3f} s, median {marks_med:.3f} s{cpu(marks_cpu)}"
        )
        print(
            "calibration selector, one group (25 versions):  min "
            f"{one_min:.3f} s, median {one_med:.3f} s{cpu(one_cpu)}"
        )
        print(
            "calibration_row, one rule version (5,000):      min "
            f"{rv_min:.3f} s, median {rv_med:.3f} s{cpu(rv_cpu)}"
        )
        print(
            "hand-written SQL of the same counts:            min "
            f"{hand_min:.3f} s, median {hand_med:.3f} s{cpu(hand_cpu)}"
        )
        agree = mismatches == 0 and len(hand_rows) == len(by_key)
        print(f"counts agree: {'yes' if agree else f'NO ({mismatches})'}")

        # What the tally costs a reviewer: mark_set (and its
        # trigger's recount) on verdicts already marked.
        from django.contrib.auth import get_user_model

        from evals.judging.models import Verdict
        from labeling.services.marks import mark_set

        reviewer = get_user_model().objects.get(username="bench-rev0")
        some = list(Verdict.objects.filter(marks__isnull=False, error="").order_by("pk")[:200:4])
        t0 = time.perf_counter()
        for v in some:
            mark_set(reviewer=reviewer, verdict=v, correct=True)
        per_mark = (time.perf_counter() - t0) / len(some)
        print(
            "mark_set with its tally trigger: "
            f"{per_mark * 1000:.1f} ms a mark (mean of {len(some)})"
        )
        connection.close()


if __name__ == "__main__":
    main()
