"""Benchmark: the calibration page's aggregates
over 1,000,000 marked verdicts and 200 rule versions.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME names a database the benchmark may
create, fill and DROP (use a dedicated one, e.g. docket_bench). It loads the data with COPY, times
the calibration selector (the SQL aggregate plus the figures in Python) and, in the same run, a
hand-written SQL query of the same counts, checks both agree, prints the figures, and drops the
database. The rows are COPYed with triggers off (session_replication_role = replica), so the verdict
tally is built afterwards by `verdict_tally_rebuild`, whose time is printed too; the same aggregate
straight from the marks (the path before the tally) is timed beside it, and so is `mark_set` with
its tally trigger. Options: BENCH_TRANSCRIPTS (default 5000), BENCH_RULES (default 200),
BENCH_TWIN_RULES (default 10: rule versions judged again with the prompt's outputs swapped, so the
judges compared and errored verdicts covered by the truth are timed too), BENCH_KEEP=1 to keep the
database afterwards, BENCH_REUSE=1 to time a kept database again without loading. Errored verdicts
(1%) are not marked, as nobody can mark them.
"""

import os
import random
import statistics
import sys
import time
from pathlib import Path

from support import (
    DEDICATED,
    bench_client,
    copy_rows,
    counts_line,
    django_setup,
    postgres_url,
    process_cpu_seconds,
    scratch_database,
    sequences_reset,
)

# This folder holds bench/axes.py, which would shadow django-axes once Django loads its
# middleware: support is imported, the folder is no longer needed on the path.
sys.path.remove(str(Path(__file__).resolve().parent))

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
       sum(w) FILTER (WHERE NOT errored AND flagged AND truth) AS w_tp
FROM resolved
GROUP BY rule_version_id, judge_id
"""

# Every errored verdict (none is marked: nothing to mark), and those whose call's truth the marks
# on the call's other verdicts of the rule version settle (they all say broken, or all say not).
HAND_ERRORED_SQL = """
WITH per_verdict AS (
    SELECT v.id, v.transcript_id, v.rule_version_id, v.flagged,
           count(*) FILTER (WHERE m.correct) AS rights,
           count(*) FILTER (WHERE NOT m.correct) AS wrongs
    FROM evals_verdict v JOIN labeling_mark m ON m.verdict_id = v.id
    WHERE v.error = ''
    GROUP BY v.id
), truths AS (
    SELECT pv.transcript_id, pv.rule_version_id,
           CASE WHEN s.correct IS NOT NULL THEN s.correct
                WHEN rights > wrongs THEN true WHEN wrongs > rights THEN false END AS truth,
           pv.flagged
    FROM per_verdict pv LEFT JOIN labeling_settlement s ON s.verdict_id = pv.id
), call_truth AS (
    SELECT transcript_id, rule_version_id,
           bool_and(flagged = truth) AS all_broken, bool_or(flagged = truth) AS any_broken
    FROM truths WHERE truth IS NOT NULL
    GROUP BY transcript_id, rule_version_id
)
SELECT e.rule_version_id, e.judge_id, count(*) AS errored,
       count(*) FILTER (WHERE ct.all_broken OR NOT ct.any_broken) AS covered
FROM evals_verdict e
LEFT JOIN call_truth ct ON ct.transcript_id = e.transcript_id
     AND ct.rule_version_id = e.rule_version_id
WHERE e.error <> ''
GROUP BY e.rule_version_id, e.judge_id
"""


def database_exists(url: str) -> bool:
    """Return whether the database in `url` exists (BENCH_REUSE times a kept one again)."""
    import psycopg

    try:
        psycopg.connect(url).close()
    except psycopg.OperationalError:
        return False
    return True


def load(n_transcripts: int, n_rules: int, n_twin: int) -> dict:
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
    # The same judge with its outputs in the other order, on the first n_twin rule versions: the
    # judges compared (positional agreement) and errored verdicts whose truth the marks settle.
    twin = Judge.objects.create(name="gpt-4o-mini/conduct-v3@ba", kind="llm")
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

        def verdict_and_marks(vid, t, rv, judge_id, flagged, error, right, r_t):
            """Return a verdict row and its mark rows (none when it errored: nothing to mark)."""
            marks = []
            for j, (r_pk, assignment) in enumerate(reviewers_of[t] if not error else []):
                # A second reviewer agrees with the first 85% of the time.
                correct = right if j == 0 or r_t.random() < 0.85 else not right
                marks.append((vid, r_pk, "t" if correct else "f", "", assignment, now, now))
            row = (
                vid,
                t,
                rv.pk,
                judge_id,
                "t" if flagged else "f",
                0 if flagged else None,
                "[]",
                "",
                "",
                80,
                error,
                now,
            )
            return row, marks

        def judged(t: int):
            """Yield (verdict row, its mark rows) for call t; the same every time it is called:
            the judge on every rule version, its other prompt order on the first n_twin."""
            r_t = random.Random(t)
            for k, rv in enumerate(rvs):
                vid = (t - 1) * len(rvs) + k + 1
                base_rate, accuracy = quality[rv.pk]
                flagged = r_t.random() < base_rate
                error = "timeout" if r_t.random() < 0.01 else ""
                right = r_t.random() < accuracy
                yield verdict_and_marks(vid, t, rv, judge.pk, flagged, error, right, r_t)
                if k < n_twin:
                    broken = flagged == right
                    twin_flag = flagged if r_t.random() < 0.9 else not flagged
                    twin_error = "timeout" if r_t.random() < 0.01 else ""
                    twin_vid = n_transcripts * len(rvs) + (t - 1) * n_twin + k + 1
                    yield verdict_and_marks(
                        twin_vid, t, rv, twin.pk, twin_flag, twin_error, twin_flag == broken, r_t
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
    return process_cpu_seconds(pid)


def timed(fn, repeat: int = 5) -> tuple[float, float, object, float | None, float]:
    """Return min and median wall seconds, the result, and the median CPU seconds of PostgreSQL's
    backend and of this process (on a shared machine the wall time includes waiting for a core;
    the CPU seconds do not)."""
    fn()  # warm the cache
    times, cpus, pys, result = [], [], [], None
    for _ in range(repeat):
        c0, p0 = backend_cpu_s(), time.process_time()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        c1, p1 = backend_cpu_s(), time.process_time()
        pys.append(p1 - p0)
        if c0 is not None and c1 is not None:
            cpus.append(c1 - c0)
    pg = statistics.median(cpus) if cpus else None
    return min(times), statistics.median(times), result, pg, statistics.median(pys)


def report(label: str, t) -> None:
    """Print one timing line: wall min and median, then the CPU seconds."""
    wall_min, wall_med, _, pg, py = t
    pg_text = f", PostgreSQL CPU {pg:.3f} s" if pg is not None else ""
    print(
        f"{label:<50} min {wall_min:.3f} s, median {wall_med:.3f} s{pg_text}, Python CPU {py:.3f} s"
    )


def main() -> None:
    url = postgres_url("calibration.py", "docket_bench", DEDICATED)
    n_transcripts = int(os.environ.get("BENCH_TRANSCRIPTS", "5000"))
    n_rules = int(os.environ.get("BENCH_RULES", "200"))
    n_twin = int(os.environ.get("BENCH_TWIN_RULES", "10"))
    reuse = os.environ.get("BENCH_REUSE") == "1" and database_exists(url)
    with scratch_database(url, reuse=reuse) as db_url:
        django_setup(migrate=not reuse, DATABASE_URL=db_url)
        from django.db import connection

        from labeling.selectors.calibration import calibration_counts, calibration_rows

        if reuse:
            print(f"reusing the data already in {connection.settings_dict['NAME']} (BENCH_REUSE=1)")
        else:
            print(
                f"loading {n_transcripts} calls x {n_rules} rule versions, and the judge's other "
                f"prompt order on {n_twin} of them, with COPY ...",
                flush=True,
            )
            counts = load(n_transcripts, n_rules, n_twin)
            with connection.cursor() as cur:
                cur.execute("VACUUM ANALYZE")
            print(counts_line(counts))

        def hand():
            with connection.cursor() as cur:
                cur.execute(HAND_SQL)
                marked = cur.fetchall()
                cur.execute(HAND_ERRORED_SQL)
                return marked, cur.fetchall()

        from evals.rules.models import RuleVersion
        from labeling.selectors.calibration import calibration_row
        from labeling.selectors.judge_pairs import judge_pairs_attach

        def page_data(errors="exclude"):
            """What the page reads: every row, and the judges compared."""
            rows = calibration_rows(errors=errors)
            judge_pairs_attach(rows, errors=errors)
            return rows

        from django.db import transaction

        from labeling.selectors.calibration import (
            _aggregate_sql,
            _errored_aggregate_sql,
            calibration_judges,
        )

        def one_sql(sql):
            def run():
                with transaction.atomic(), connection.cursor() as cur:
                    cur.execute("SET LOCAL jit = off")
                    cur.execute(sql)
                    return cur.fetchall()

            return run

        t_sel = timed(calibration_rows)
        rows = t_sel[2]
        t_tally = timed(one_sql(_aggregate_sql("")))
        t_errored = timed(one_sql(_errored_aggregate_sql("", "")))

        def pairs_only():
            for r in rows:
                r.other_judges = []
            judge_pairs_attach(rows, errors="as_wrong")

        t_pairs = timed(pairs_only)
        t_page = timed(page_data)
        page_rows = t_page[2]
        t_wrong = timed(lambda: page_data("as_wrong"))
        client = bench_client("bench-lead-page", "lead")

        def get(path):
            def run():
                response = client.get(path)
                assert response.status_code == 200
                return response

            return run

        t_get = timed(get("/calibration/?errors=as_wrong"))
        t_get_pairs = timed(get("/calibration/?errors=as_wrong&part=pairs"))
        t_judges = timed(lambda: list(calibration_judges()))
        t_marks = timed(lambda: calibration_counts(from_marks=True), repeat=3)
        t_one = timed(lambda: calibration_rows(group="boundaries"))
        rv = RuleVersion.objects.order_by("pk").first()
        t_rv = timed(lambda: calibration_row(rule_version=rv))
        t_hand = timed(hand, repeat=3)
        hand_rows, hand_errored = t_hand[2]
        load1 = os.getloadavg()[0]

        by_key = {(r.rule_version.pk, r.judge.pk): r.counts for r in rows if r.judge}
        mismatches = 0
        for rv_id, judge_id, tp, fp, fn, tn, waiting, w_tp in hand_rows:
            c = by_key[(rv_id, judge_id)]
            if (c.tp, c.fp, c.fn, c.tn, c.waiting) != (tp, fp, fn, tn, waiting) or abs(
                c.w["tp"] - float(w_tp or 0)
            ) > 1e-6:
                mismatches += 1
        for rv_id, judge_id, errored, covered in hand_errored:
            c = by_key[(rv_id, judge_id)]
            mismatches += (c.errored, c.errored_covered) != (errored, covered)
        marked = sum(c.marked + c.waiting for c in by_key.values())
        errored = sum(c.errored for c in by_key.values())
        covered = sum(c.errored_covered for c in by_key.values())
        pairs = sum(len(r.other_judges) for r in page_rows) // 2
        print(
            f"rows: {len(rows)} (rule version, judge); marked verdicts counted: {marked:,}; "
            f"errored verdicts {errored:,}, {covered:,} of them covered by the truth; "
            f"judge pairs compared: {pairs}"
        )

        print(
            f"machine: {os.cpu_count()} cores, load average "
            f"{load1:.1f} while timing (wall times include waiting)"
        )
        report("calibration selector, all rows (SQL + figures):", t_sel)
        report("  its aggregate over the tally (as before):", t_tally)
        report("  its aggregate over the errored verdicts (new):", t_errored)
        report("  the judges compared, as_wrong (new):", t_pairs)
        report("the API's data: rows + judges compared:", t_page)
        report("  the same with errors=as_wrong:", t_wrong)
        report("GET /calibration/?errors=as_wrong (the table):", t_get)
        report("GET ...&part=pairs (judges compared, fetched after):", t_get_pairs)
        report("  of which the judge filter's options:", t_judges)
        report("the same counts from the marks (no tally):", t_marks)
        report("calibration selector, one group (25 versions):", t_one)
        report("calibration_row, one rule version (5,000):", t_rv)
        report("hand-written SQL of the same counts:", t_hand)
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
