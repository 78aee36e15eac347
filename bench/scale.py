"""Benchmark of record for issue 26: every page and API list at 10% and 100% of a quarter's data.

Builds a quarter of a busy team's data on PostgreSQL through Docket's own importers and services,
at two sizes, and times every GET page of the console and every API list (as a role that may see
it; the dashboard as each role) with Django's test client, DEBUG off: a cold request at each
point (the cache cleared), then --rounds requests at each point in turn, interleaved so that what
else loads the machine weighs on both alike; the median, with the query count of the last. It
prints one table:

    page · CPU ms at the small point · CPU ms at the large point · growth · ms at the large point
    · cold ms · queries

(CPU ms: this process's and its PostgreSQL backend's CPU for one request, the median of the
rounds, the backend's to the nanosecond from /proc/PID/schedstat; growth is its ratio between
the points: the machine may be shared, and CPU time does not count others' work, where
wall-clock time does; cold ms: the first request after the cache is cleared.)

What a call carries, per call (the issue's quarter, 50,604 calls, divided by its calls): 30 timed
turns; about 80 conduct verdicts (80 rules, 197 rule versions: a call is judged on the version of
its third of the quarter); 3 runtime-classifier verdicts; the turn-taking decisions its gaps give
(derived by the importer); one conversation score; 40% of calls are sampled and rated (outcome
ratings), 1.5% reviewed with every verdict marked (one reviewer in ten twice, disagreeing one
time in ten), 3.3% of decisions labelled.

Through the project's own code: rules and decision kinds (`rules_import`,
`decision_kinds_import`), calls with their turns and decisions (`transcripts_import`), verdicts
(`verdicts_import`, COPY-speed), marks (`marks_import`), decision labels
(`decision_labels_bulk`). Samples, assignments, outcome ratings and conversation scores are
bulk-created rows (their services take one call at a time: a call's review or judge run).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/docket_scalepages \\
        .venv/bin/python bench/scale.py [--calls 5000] [--small 0.1] [--rounds 5] [--only NAME]

--calls is the large point (the issue's quarter is 50,604 calls: 4.1M verdicts; 5,000 builds in
about two and a half minutes on a 2-core machine), --small its fraction (0: the large point only).
Each point gets its own database beside DATABASE_URL's (NAME_<calls>), dropped and created, and
dropped at the end unless BENCH_KEEP=1; BENCH_REUSE=1 then times kept ones again without building
(give the same --calls and --small; a reused database is migrated first). A benchmark, not a
test: it prints figures and asserts only that each page answers 200.
"""

import datetime as dt
import json
import os
import random
import statistics
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

from support import cpu_seconds, django_setup, postgres_url, scratch_database

# bench/ holds modules (axes.py) that would shadow installed ones once Django loads.
sys.path.remove(str(Path(__file__).resolve().parent))

warnings.filterwarnings("ignore", message="No directory at")
N_RULES = 80
VERSIONS_2, VERSIONS_3 = 60, 57  # rules with a 2nd and a 3rd version: 197 versions in all
TURNS = 30
CONDUCT_JUDGE = "gpt-4o-mini/conduct-v3"
CLASSIFIER_JUDGE = "classifier:patterns-v1"
CONVERSATION_JUDGE = "gpt-4o-mini/conversation-v1"
DAY0 = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)
REVIEWERS = [f"rev{i}" for i in range(8)]
FINDINGS = ["repeated_ground", "phase_missing", "persona_shift", "abrupt_close"]
KINDS = """\
decision_kinds:
  - id: turn-taking
    question: Was the candidate done talking?
    answers: [take the turn, wait]
    derive: turn_gap
"""


def arg(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def rules_yaml(version: int) -> str:
    import yaml

    groups = ["opening", "asking", "acknowledging", "language", "requests", "boundaries", "closing"]
    rules = []
    for r in range(N_RULES):
        n = 1 + (version >= 2 and r < VERSIONS_2) + (version >= 3 and r < VERSIONS_3)
        rules.append(
            {
                "id": f"{groups[r % 7]}.rule-{r:03d}",
                "group": groups[r % 7],
                "text": f"Rule {r}, text {n}.",
                "severity": "minor",
                "safety": r % 7 == 5,
            }
        )
    return yaml.safe_dump({"rules": rules}, sort_keys=False)


def call_id(i: int) -> str:
    return f"call-{i:07d}"


def started(i: int, n: int) -> dt.datetime:
    return DAY0 + dt.timedelta(seconds=i * 90 * 86400 // n)


def transcript_lines(n: int):
    rng = random.Random("scale-calls")
    for i in range(n):
        turns, t = [], 0
        for k in range(TURNS):
            start = max(t + rng.randint(-300, 1500), 0)
            end = start + rng.randint(800, 6000)
            turns.append(
                {
                    "speaker": "agent" if k % 2 == 0 else "user",
                    "text": f"Turn {k} of call {i}: some words said here.",
                    "start_ms": start,
                    "end_ms": end,
                    "phase": ["opening", "asking", "closing"][k * 3 // TURNS],
                }
            )
            t = end
        yield json.dumps(
            {
                "id": call_id(i),
                "agent": "phone-screen",
                "agent_version": f"2026-q4.{1 + i * 4 // n}",
                "started_at": started(i, n).isoformat(),
                "language": "de" if i % 10 == 0 else "en",
                "tenant": f"tenant-{i % 3}",
                "turns": turns,
            }
        )


def version_of(r: int, i: int, n: int) -> int:
    third = 1 + i * 3 // n
    latest = 1 + (r < VERSIONS_2) + (r < VERSIONS_3)
    return min(third, latest)


def marked(i: int) -> bool:
    return i % 65 == 0  # 1.5% of calls, all among the rated ones (i % 5 == 0)


def rated(i: int) -> bool:
    return i % 5 in (0, 1)  # 40%


def verdict_lines(n: int, marks_out: list):
    """Yield the verdicts' JSON lines; fill marks_out with the marks' lines as a side effect."""
    from evals.classifiers.services import RULE_OF

    groups = ["opening", "asking", "acknowledging", "language", "requests", "boundaries", "closing"]
    classifier_rules = sorted(RULE_OF.values())
    for i in range(n):
        rng = random.Random(i)
        bad = rng.random() < 0.12
        checks = [
            (f"{groups[r % 7]}.rule-{r:03d}", version_of(r, i, n), CONDUCT_JUDGE, 0.02 + bad * 0.1)
            for r in range(N_RULES)
        ] + [(rule, 1, CLASSIFIER_JUDGE, 0.1) for rule in classifier_rules]
        for rule, version, judge, rate in checks:
            flagged = rng.random() < rate
            record = {
                "transcript": call_id(i),
                "rule": rule,
                "rule_version": version,
                "flagged": flagged,
                "severity": "minor",
                "rationale": "A one-line rationale.",
                "confidence": rng.randint(30, 99),
                "judge": judge,
            }
            if flagged:
                record["turn"] = rng.randrange(TURNS)
            yield json.dumps(record)
            if marked(i):
                first = REVIEWERS[i % len(REVIEWERS)]
                right = rng.random() < 0.9
                key = {k: record[k] for k in ("transcript", "rule", "rule_version", "judge")}
                marks_out.append(json.dumps({**key, "reviewer": first, "correct": right}))
                if i % 650 == 0:  # a second reviewer on one reviewed call in ten
                    second = REVIEWERS[(i + 1) % len(REVIEWERS)]
                    again = right if rng.random() < 0.9 else not right
                    marks_out.append(json.dumps({**key, "reviewer": second, "correct": again}))


def build(n: int) -> dict:
    from django.db import connection
    from django.utils import timezone

    from evals.catalog.models import Agent, Transcript
    from evals.catalog.services.importing import transcripts_import
    from evals.classifiers.services import classifier_rules_ensure
    from evals.conversation.figures import conversation_figures_compact
    from evals.conversation.models import ConversationScore
    from evals.decisions.models import Decision
    from evals.decisions.services.kinds import decision_kinds_import
    from evals.judging.models import Judge
    from evals.judging.services.importing import verdicts_import
    from evals.rules.importing import rules_import
    from labeling.models import Assignment, DailySample, OutcomeQuestion, OutcomeRating, SampleItem
    from labeling.services.decisions import decision_labels_bulk
    from labeling.services.marks_import import marks_import
    from tests.factories import UserFactory

    steps = {}

    def step(name, fn):
        t0 = time.perf_counter()
        out = fn()
        steps[name] = round(time.perf_counter() - t0, 1)
        print(f"  {name}: {steps[name]} s", flush=True)
        return out

    for v in (1, 2, 3):
        rules_import(text=rules_yaml(v), source=f"rules-v{v}")
    classifier_rules_ensure()
    decision_kinds_import(text=KINDS)
    step("calls", lambda: transcripts_import(lines=transcript_lines(n)))
    marks_lines: list[str] = []
    step("verdicts", lambda: verdicts_import(lines=verdict_lines(n, marks_lines)))

    users = {name: UserFactory(username=name, roles=["reviewer"]) for name in REVIEWERS}
    ids = dict(Transcript.objects.values_list("external_id", "pk"))
    now = timezone.now()

    def samples():
        days = {
            d: DailySample.objects.create(day=(DAY0 + dt.timedelta(days=d)).date(), size=n // 90)
            for d in range(91)
        }
        items, who = [], []
        for i in range(n):
            if not rated(i):
                continue
            p = 0.5 if marked(i) else random.Random(i).choice([0.05, 0.1, 0.5])
            reason = "judge_check" if p == 0.5 else "uniform"
            items.append(
                SampleItem(
                    sample=days[(started(i, n) - DAY0).days],
                    transcript_id=ids[call_id(i)],
                    reason=reason,
                    inclusion_probability=p,
                )
            )
            people = [REVIEWERS[i % len(REVIEWERS)]]
            if i % 650 == 0:
                people.append(REVIEWERS[(i + 1) % len(REVIEWERS)])
            who.append((i, people))
        items = SampleItem.objects.bulk_create(items, batch_size=5000)
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    item=item,
                    reviewer=users[name],
                    claimed_at=now,
                    lease_expires_at=now,
                    finished_at=now,
                )
                for item, (_, people) in zip(items, who)
                for name in people
            ],
            batch_size=5000,
        )
        agent = Agent.objects.get(name="phone-screen")
        question = OutcomeQuestion.objects.create(agent=agent, key="overall", text="Good call?")
        ratings = []
        for a in assignments:
            rng = random.Random(a.item.transcript_id)
            rating = rng.choice([1, 2, 3, 4, 4, 5])
            ratings.append(
                OutcomeRating(
                    transcript_id=a.item.transcript_id,
                    question=question,
                    reviewer_id=a.reviewer_id,
                    rating=rating,
                    reason="bad" if rating <= 2 else "",
                    assignment=a,
                )
            )
        OutcomeRating.objects.bulk_create(ratings, batch_size=5000)
        return len(ratings)

    steps["ratings"] = step("samples, assignments, ratings", samples)
    step("marks", lambda: marks_import(lines=marks_lines))

    def labels():
        user = users[REVIEWERS[0]]
        chosen = list(Decision.objects.select_related("kind_version").order_by("pk")[::30])
        rng = random.Random(5)
        return decision_labels_bulk([(user, d, rng.choice(d.kind_version.answers)) for d in chosen])

    step("decision labels", labels)

    def scores():
        judge, _ = Judge.objects.get_or_create(
            name=CONVERSATION_JUDGE,
            defaults={"kind": "llm", "model": "gpt-4o-mini", "prompt_version": "conversation-v1"},
        )
        rows = []
        for i in range(n):
            rng = random.Random(f"conv{i}")
            findings = [
                {
                    "type": rng.choice(FINDINGS),
                    "check": "conversation.plan",
                    "turns": [rng.randrange(TURNS)],
                    "note": "seen",
                }
                for _ in range(rng.choice([0, 0, 1, 2]))
            ]
            errored = rng.random() < 0.01
            rows.append(
                ConversationScore(
                    transcript_id=ids[call_id(i)],
                    judge=judge,
                    score=None if errored else rng.randint(1, 10),
                    reason="" if errored else "Went to plan mostly.",
                    findings=[] if errored else findings,
                    error="timeout" if errored else "",
                )
            )
        ConversationScore.objects.bulk_create(rows, batch_size=5000)
        conversation_figures_compact()  # as a judge run's items leave them

    step("conversation scores", scores)
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE")
        counts = {}
        for table in (
            "evals_transcript",
            "evals_turn",
            "evals_verdict",
            "labeling_mark",
            "labeling_outcomerating",
            "evals_decision",
            "labeling_decisionlabel",
            "evals_conversationscore",
            "evals_ruleversion",
        ):
            cur.execute(f"SELECT count(*) FROM {table}")
            counts[table.split("_", 1)[1]] = cur.fetchone()[0]
    print("  rows: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()), flush=True)
    return steps


def pages(n: int) -> list[tuple[str, str, str]]:
    """Return (label, url, role) for every GET page and API list the console serves."""
    from django.urls import reverse

    from evals.catalog.models import AgentVersion
    from evals.judging.models import Verdict
    from evals.rules.models import RuleVersion
    from tests.core.test_access import TABLE, E, L, R, url_patterns

    mid = call_id(n // 2 + 5)  # a rated call, not marked
    av = AgentVersion.objects.select_related("agent").order_by("version").last()
    rv = (
        RuleVersion.objects.filter(verdicts__marks__isnull=False)
        .select_related("rule")
        .order_by("rule__rule_id", "number")
        .first()
    )
    verdict = Verdict.objects.filter(transcript__external_id=mid).order_by("pk").first()
    kwargs = {
        "transcript-detail": {"external_id": mid},
        "rule-detail": {"rule_id": rv.rule.rule_id},
        "api-transcript": {"id": mid},
        "api-rule": {"id": rv.rule.rule_id},
        "agent-version-detail": {"agent": av.agent.name, "version": av.version},
        "api-agent-version": {"agent": av.agent.name, "version": av.version},
        "conversation-version": {"pk": av.pk},
        "review-call": {"external_id": mid},
        "review-call-progress": {"external_id": mid},
        "outcome-call-issue": {"external_id": mid},
        "classifier-detail": {"rule_id": "classifiers.injection"},
        "classifier-export": {"rule_id": "classifiers.injection", "fmt": "csv"},
        "api-classifier-thresholds": {"rule_id": "classifiers.injection"},
        "calibration-export": {"fmt": "csv"},
        "calibration-detail": {"pk": rv.pk},
        "calibration-cell": {"pk": rv.pk, "cell": "tp"},
        "workbench-rule": {"rule_id": rv.rule.rule_id},
        "issue-row-write-rule": None,
        "api-verdict": {"pk": verdict.pk},
    }
    out = []
    patterns = dict(url_patterns())
    for (name, method), who in sorted(TABLE.items()):
        if method != "GET" or name in ("login", "api-schema", "api-docs"):
            continue
        pattern = patterns[name]
        params = set(pattern.pattern.converters) | set(pattern.pattern.regex.groupindex)
        if params and not kwargs.get(name):
            continue  # an object this data has none of (a gate run, a webhook, a draft, ...)
        url = reverse(name, kwargs=kwargs.get(name) or {})
        roles = [r for r in (L, E, R) if r in who]
        if name == "dashboard":
            out += [(f"{name} ({r})", url, r) for r in roles]
        else:
            out.append((name, url, roles[0]))
    # The same pages as their users open them: a filter, a window, a later page.
    out += [
        ("outcomes ?by=week", "/outcomes/?agent=phone-screen&by=week", L),
        ("transcript-list ?flagged_rule", f"/calls/?flagged_rule={rv.rule.rule_id}", L),
        ("verdict-list ?rule&flagged", f"/verdicts/?rule={rv.rule.rule_id}&flagged=yes", L),
        ("api-verdicts ?rule", f"/api/v1/verdicts/?rule={rv.rule.rule_id}", L),
    ]
    return out


class Point:
    """One size's database, with its own connection, cache key prefix and signed-in clients."""

    def __init__(self, n: int, name: str):
        import copy

        from django.db import connections
        from django.test import Client

        self.n = n
        settings_dict = copy.deepcopy(connections.settings["default"])
        settings_dict["NAME"] = name
        self.connection = type(connections["default"])(settings_dict, "default")
        self.use()
        from tests.factories import UserFactory, api_key

        users = {r: UserFactory(username=f"bench-{r}", roles=[r]) for r in ROLES}
        self.keys = {r: api_key(u) for r, u in users.items()}
        self.clients = {}
        for role, user in users.items():
            self.clients[role] = Client()
            self.clients[role].force_login(user)
        self.pages = {label: (url, role) for label, url, role in pages(n)}

    def use(self) -> None:
        """Make this point's database and cache entries the ones Django serves from."""
        from django.core.cache import cache
        from django.db import connections

        connections["default"] = self.connection
        cache.key_prefix = f"scale{self.n}"

    def get(self, label: str):
        from django.test import Client

        url, role = self.pages[label]
        if url.startswith("/api/"):
            response = Client().get(
                url, headers={"Authorization": f"Token {self.keys[role]}"}, secure=True
            )
        else:
            response = self.clients[role].get(url, secure=True)
        b"".join(response) if response.streaming else response.content
        return response


ROLES = ("lead", "engineer", "reviewer")


def time_pages(points: list[Point], rounds: int, only: str) -> dict[int, dict]:
    """Time every page at every point, interleaved: the cold request at each point, then each
    round requests it at each point in turn, so that whatever else loads the machine weighs on
    both points alike and the growth between them stays fair."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    results = {p.n: {} for p in points}
    for label in points[-1].pages:
        if only and only not in label:
            continue
        at = [p for p in points if label in p.pages]
        cold, seconds, cpu, queries = {}, defaultdict(list), defaultdict(list), {}
        for p in at:
            p.use()
            cache.clear()
            t0 = time.perf_counter()
            response = p.get(label)
            cold[p.n] = time.perf_counter() - t0
            if response.status_code != 200:
                print(f"  {label} at {p.n:,}: {response.status_code}, left out", flush=True)
                break
        else:
            for _ in range(rounds):
                for p in at:
                    p.use()
                    with CaptureQueriesContext(connection) as ctx:
                        c0 = cpu_seconds()
                        t0 = time.perf_counter()
                        p.get(label)
                        seconds[p.n].append(time.perf_counter() - t0)
                        c1 = cpu_seconds()
                    cpu[p.n].append(c1[0] - c0[0] + ((c1[1] - c0[1]) if c0[1] is not None else 0))
                    queries[p.n] = len(ctx.captured_queries)
            for p in at:
                results[p.n][label] = (
                    statistics.median(seconds[p.n]),
                    queries[p.n],
                    cold[p.n],
                    statistics.median(cpu[p.n]),
                )
            print(
                f"  {label:44} "
                + "  ".join(
                    f"{statistics.median(cpu[p.n]) * 1000:6.1f} CPU ms @{p.n:,}" for p in at
                ),
                flush=True,
            )
    return results


def main() -> None:
    from contextlib import ExitStack

    url = postgres_url("scale.py", "docket_scalepages", "a dedicated database: dropped and made")
    large = int(arg("--calls", "5000"))
    small = round(large * float(arg("--small", "0.1")))
    reuse = os.environ.get("BENCH_REUSE") == "1"
    rounds = int(arg("--rounds", "5"))
    only = arg("--only", "")
    base = url.rsplit("/", 1)[1]
    sizes = (small, large) if small else (large,)
    with ExitStack() as stack:
        for n in sizes:
            db_url = stack.enter_context(scratch_database(url, name=f"{base}_{n}", reuse=reuse))
            if n != sizes[0]:  # Django is set up already: point its connection at this database
                from django.db import connection

                connection.close()
                connection.settings_dict["NAME"] = f"{base}_{n}"
            django_setup(
                migrate=True,
                DATABASE_URL=db_url,
                DJANGO_DEBUG="0",
                DJANGO_SECRET_KEY="bench-scale",
                CELERY_BROKER_URL="",
                DOCKET_LOG_LEVEL="ERROR",
            )
            from django.conf import settings
            from django.db import connection

            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
            # Pages render {% static %} without a collectstatic manifest; the files are not timed.
            settings.STORAGES = {
                **settings.STORAGES,
                "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
            }
            if not reuse:
                print(f"building {n:,} calls ...", flush=True)
                t0 = time.perf_counter()
                build(n)
                print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)
            connection.close()
        print("timing pages", flush=True)
        points = [Point(n, f"{base}_{n}") for n in sizes]
        results = time_pages(points, rounds, only)
        for p in points:
            p.connection.close()
    print(
        f"\nmedian of {rounds}, the points interleaved, DEBUG off, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    head = (
        f"{'page':44} {f'CPU@{small:,}':>10} {f'CPU@{large:,}':>10} {'growth':>7} "
        f"{f'ms@{large:,}':>10} {'cold ms':>8} {'queries':>7}"
    )
    print(head)
    print("-" * len(head))
    for label, (ms, queries, cold, cpu) in sorted(results[large].items(), key=lambda kv: -kv[1][3]):
        before = results.get(small, {}).get(label)
        growth = f"{cpu / before[3]:.1f}x" if before and before[3] else "-"
        small_cpu = f"{before[3] * 1000:.0f}" if before else "-"
        print(
            f"{label:44} {small_cpu:>10} {cpu * 1000:10.0f} {growth:>7} {ms * 1000:10.0f} "
            f"{cold * 1000:8.0f} {queries:7d}"
        )


if __name__ == "__main__":
    main()
