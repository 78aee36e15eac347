"""Benchmark: the issue sheet, its filters, keyset
pages, the CSV export and the API at 100,000 rows.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME names a database the benchmark may
create, fill and DROP (use a dedicated one, e.g. docket_bench_issues). It migrates, bulk-creates the
rows (a tenth triaged against rules, some assigned, a quarter heard in audio only, spread over 90
days), then requests each page through Django's test client as an engineer and prints the time and
the number of queries. Options: BENCH_ROWS (default 100000), BENCH_KEEP=1 to keep the database.
"""

import datetime as dt
import os
import random
import time

from support import (
    DEDICATED,
    bench_client,
    counts_line,
    django_setup,
    postgres_url,
    scratch_database,
    timed_get,
)


def load(n_rows: int) -> dict:
    from django.db import connection
    from django.utils import timezone

    from evals.catalog.models import Agent, AgentVersion, Transcript
    from evals.rules.models import Rule, RuleVersion
    from labeling.models import IssueRow
    from tests.factories import UserFactory

    rng = random.Random(20261130)
    agent = Agent.objects.create(name="phone-screen")
    versions = [
        AgentVersion.objects.create(agent=agent, version=v)
        for v in ("2026-11-21.1", "2026-11-28.1")
    ]
    calls = Transcript.objects.bulk_create(
        [
            Transcript(
                external_id=f"call-{i:06d}", agent_version=versions[i % 2], checksum=f"{i:064x}"
            )
            for i in range(2000)
        ]
    )
    rules = Rule.objects.bulk_create(
        [Rule(rule_id=f"asking.rule-{i:02d}", group="asking") for i in range(20)]
    )
    rvs = RuleVersion.objects.bulk_create(
        [RuleVersion(rule=r, number=1, text="Text.") for r in rules]
    )
    reviewers = [UserFactory(username=f"reviewer{i}", roles=["reviewer"]) for i in range(8)]
    engineers = [UserFactory(username=f"engineer{i}", roles=["engineer"]) for i in range(4)]
    words = [
        "talks over",
        "long silence",
        "two questions",
        "hinted at the answer",
        "greeted twice",
        "rude",
    ]
    now = timezone.now()
    t0 = time.perf_counter()
    batch = []
    for n in range(1, n_rows + 1):
        triaged = rng.random() < 0.1
        rv = rng.choice(rvs) if triaged else None
        batch.append(
            IssueRow(
                number=n,
                transcript=rng.choice(calls),
                turn=rng.randrange(40),
                what=f"{rng.choice(words)} at {rng.randrange(30)}:{rng.randrange(60):02d}, row {n}",
                severity=rng.choice(["minor", "minor", "major", "critical"]),
                audio_only=rng.random() < 0.25,
                reporter=rng.choice(reviewers),
                status="triaged" if triaged else "new",
                outcome=rng.choice(["new_rule", "rule_fix"]) if triaged else "",
                assignee=rng.choice(engineers) if rng.random() < 0.2 else None,
                rule_id=rv.rule_id if rv else None,
                rule_version=rv,
            )
        )
        if len(batch) == 10000:
            IssueRow.objects.bulk_create(batch)
            batch = []
    IssueRow.objects.bulk_create(batch)
    with connection.cursor() as cur:
        # Spread the rows over 90 days, oldest first, as they would have been filed.
        cur.execute(
            "UPDATE labeling_issuerow SET created_at = %s - (%s - number) * interval '78 seconds'",
            [now, n_rows],
        )
        cur.execute("VACUUM ANALYZE")
    return {
        "rows": n_rows,
        "load_s": round(time.perf_counter() - t0, 1),
        "rule": rules[3].rule_id,
        "since": (now - dt.timedelta(days=7)).date().isoformat(),
    }


def main() -> None:
    url = postgres_url("issue_sheet.py", "docket_bench_issues", DEDICATED)
    n_rows = int(os.environ.get("BENCH_ROWS", "100000"))
    with scratch_database(url) as db_url:
        django_setup(migrate=True, DATABASE_URL=db_url)
        from django.db import connection

        from labeling.selectors import issue_rows as sel

        print(f"loading {n_rows:,} issue rows ...", flush=True)
        counts = load(n_rows)
        print(counts_line(counts))
        client = bench_client("bench-engineer", "engineer")
        # A cursor a quarter of the way into the severity sort.
        deep_row = sel.issue_rows_filtered(sel.SheetFilters(sort="severity")).order_by(
            "severity", "number"
        )[n_rows // 4]
        deep = sel.cursor_encode(deep_row, "severity")
        pages = [
            ("sheet, page 1", "/issues/"),
            ("sheet, htmx fragment", "/issues/?status=new"),
            ("sheet, new + critical", "/issues/?status=new&severity=critical"),
            ("sheet, sort by severity", "/issues/?sort=severity"),
            ("sheet, severity sort, deep cursor", f"/issues/?sort=severity&after={deep}"),
            ("sheet, search in what", "/issues/?q=hinted"),
            ("sheet, rare search (1 match)", f"/issues/?q=row%20{n_rows // 2},"),
            ("sheet, one rule", f"/issues/?rule={counts['rule']}"),
            ("sheet, audio only, nobody assigned", "/issues/?audio_only=true&assignee=none"),
            (
                "sheet, last 7 days, reporter",
                f"/issues/?since={counts['since']}&reporter=reviewer3",
            ),
            ("sheet, recently changed", "/issues/?sort=-updated"),
            ("row page", f"/issues/{n_rows // 2}/"),
            ("trends", "/issues/trends/"),
            ("API list, 100 a page", "/api/v1/issue-rows/?limit=100&severity=major"),
        ]
        print(f"{'page':40} {'min s':>7} {'median s':>9} {'queries':>8}")
        for label, path in pages:
            headers = {"HX-Request": "true"} if "htmx" in label else {}
            page = timed_get(client, path, rounds=3, warmup=1, headers=headers)
            print(f"{label:40} {page.min:7.3f} {page.median:9.3f} {page.queries:8d}", flush=True)
        t0 = time.perf_counter()
        response = client.get("/issues/export.csv")
        size = sum(len(chunk) for chunk in response.streaming_content)
        print(
            f"{'CSV export, all rows':40} {time.perf_counter() - t0:7.3f} "
            f"{'':9} {'':>8}  ({size / 1e6:.1f} MB)"
        )
        connection.close()


if __name__ == "__main__":
    main()
