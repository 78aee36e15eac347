"""Outcome report speed: the figures, predictors and bad calls of one agent over many rated calls.

Fills a scratch PostgreSQL database with CALLS rated calls (each in a daily sample, rated by one
reviewer, one in ten bad), RULES verdicts per call (a few flagged) and a conversation score per
call, then times outcome_data() (what /outcomes/, GET /api/v1/outcomes/ and `manage.py
outcomes` run) and prints the median and 90th percentile with its query count.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/docket_outcome_bench \\
        .venv/bin/python bench/outcomes.py [--calls 20000] [--rules 25] [--rounds 5]
"""

import random
import sys
import time

from support import DEDICATED, counts_line, django_setup, postgres_url, scratch_database, timed


def arg(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def fill(calls: int, rules: int) -> dict:
    import datetime as dt

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from evals.catalog.models import Agent, AgentVersion, Transcript
    from evals.conversation.models import ConversationScore
    from evals.judging.models import Judge, Verdict
    from evals.rules.models import Rule, RuleVersion
    from labeling.models import Assignment, DailySample, OutcomeQuestion, OutcomeRating, SampleItem

    rng = random.Random("bench-outcomes")
    start = time.perf_counter()
    agent = Agent.objects.create(name="phone-screen")
    versions = [AgentVersion.objects.create(agent=agent, version=f"v{n}") for n in (1, 2)]
    judge = Judge.objects.create(name="llm", kind="llm")
    conv = Judge.objects.create(name="conversation", kind="llm")
    rvs = [
        RuleVersion.objects.create(
            rule=Rule.objects.create(rule_id=f"group.rule-{n}", group="group"), number=1, text="t"
        )
        for n in range(rules)
    ]
    reviewer = get_user_model().objects.create_user("bench-reviewer")
    question = OutcomeQuestion.objects.create(agent=agent, key="overall", text="Good call?")
    day0 = timezone.now() - dt.timedelta(days=90)
    samples = [
        DailySample.objects.create(day=(day0 + dt.timedelta(days=d)).date(), size=calls // 90 + 1)
        for d in range(91)
    ]
    ts = Transcript.objects.bulk_create(
        Transcript(
            external_id=f"call-{n:07d}",
            agent_version=versions[n % 2],
            checksum=f"{n:064d}",
            started_at=day0 + dt.timedelta(minutes=n * 90 * 24 * 60 // calls),
        )
        for n in range(calls)
    )
    items = SampleItem.objects.bulk_create(
        SampleItem(
            sample=samples[n * 90 // calls],
            transcript=t,
            reason="uniform",
            inclusion_probability=rng.choice([0.05, 0.1, 0.5, 1.0]),
        )
        for n, t in enumerate(ts)
    )
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        Assignment(item=i, reviewer=reviewer, claimed_at=now, lease_expires_at=now, finished_at=now)
        for i in items
    )
    verdicts = []
    ratings = []
    scores = []
    for t, a in zip(ts, assignments):
        bad = rng.random() < 0.1
        for rv in rvs:
            flagged = rng.random() < (0.3 if bad else 0.05)
            verdicts.append(Verdict(transcript=t, rule_version=rv, judge=judge, flagged=flagged))
        rating = rng.choice([1, 2]) if bad else rng.choice([3, 4, 4, 5])
        ratings.append(
            OutcomeRating(
                transcript=t,
                question=question,
                reviewer=reviewer,
                rating=rating,
                reason="bad" if rating <= 2 else "",
                assignment=a,
            )
        )
        scores.append(ConversationScore(transcript=t, judge=conv, score=rng.randint(1, 10)))
    Verdict.objects.bulk_create(verdicts, batch_size=10000)
    OutcomeRating.objects.bulk_create(ratings, batch_size=10000)
    ConversationScore.objects.bulk_create(scores, batch_size=10000)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would after a load this size
    return {
        "rated calls": calls,
        "verdicts": len(verdicts),
        "load_s": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    url = postgres_url("outcomes.py", "docket_outcome_bench", DEDICATED)
    calls, rules, rounds = arg("--calls", 20000), arg("--rules", 25), arg("--rounds", 5)
    with scratch_database(url) as db_url:
        django_setup(migrate=True, DATABASE_URL=db_url)
        print(counts_line(fill(calls, rules)), flush=True)
        from labeling.selectors.outcomes import outcome_data

        timing = timed(lambda i: outcome_data({"agent": "phone-screen"}), rounds=rounds, warmup=1)
        data = timing.result
        print(
            f"outcome_data (figures, {len(data['predictors'])} predictors, "
            f"{len(data['bad_unflagged'])} bad calls nothing flagged): "
            f"median {timing.median * 1000:.0f} ms, p90 {timing.p90 * 1000:.0f} ms, "
            f"{timing.queries} queries"
        )


if __name__ == "__main__":
    main()
