"""Review page speed: a 300-turn call with 60 verdicts.

Prints the median and 90th-percentile time to render the review page and to save a mark
(the htmx POST that returns the verdict fragment), beside a bare Django view's time, through
Django's test client (the whole middleware stack, no network). Runs on SQLite, then on
PostgreSQL too when DATABASE_URL is set (in a throwaway test database).

    .venv/bin/python bench/review_page.py [--rounds 30]
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from support import ROOT, django_setup, timed

TURNS, VERDICTS, FLAGGED = 300, 60, 20


def main() -> None:
    rounds = sys.argv[sys.argv.index("--rounds") + 1] if "--rounds" in sys.argv else "30"
    runs = [("SQLite", {k: v for k, v in os.environ.items() if k != "DATABASE_URL"})]
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        runs.append(("PostgreSQL", dict(os.environ)))
    print(
        f"review page: {TURNS} turns, {VERDICTS} verdicts ({FLAGGED} flagged at turns, "
        f"{VERDICTS - FLAGGED} whole-call); {rounds} rounds after warm-up; test client, DEBUG off"
    )
    for name, env in runs:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**env, "DJANGO_DEBUG": "1", "DOCKET_VAR_DIR": tmp, "DOCKET_LOG_LEVEL": "WARNING"}
            if name == "SQLite":
                env["DOCKET_TEST_DB_NAME"] = str(Path(tmp) / "bench.sqlite3")
            else:
                env.pop("DOCKET_TEST_DB_NAME", None)
            print(f"\n== {name}", flush=True)
            subprocess.run(
                [sys.executable, __file__, "--child", rounds], env=env, cwd=ROOT, check=True
            )


def child(rounds: int) -> None:
    django_setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases

    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.ROOT_URLCONF = "bench_review_urls"
    sys.modules["bench_review_urls"] = _urls()
    old = setup_databases(verbosity=0, interactive=False)
    try:
        client, url, verdict_urls = _fixture()
        from django.test import Client

        bare = Client()
        timings = {
            "bare Django view (GET)": _time(lambda i: bare.get("/bench-bare/"), rounds),
            "bare view, logged in + perm check": _time(
                lambda i: client.get("/bench-bare-review/"), rounds
            ),
            "review page (GET, full page)": _time(lambda i: client.get(url), rounds),
            "save a mark (htmx POST)": _time(
                lambda i: client.post(
                    verdict_urls[i % len(verdict_urls)],
                    {"correct": "1" if i % 2 else "0"},
                    HTTP_HX_REQUEST="true",
                ),
                rounds,
            ),
        }
        with CaptureQueriesContext(connection) as page_q:
            page = client.get(url)
        with CaptureQueriesContext(connection) as mark_q:
            client.post(verdict_urls[0], {"correct": "1"}, HTTP_HX_REQUEST="true")
        for label, (median, p90) in timings.items():
            print(f"  {label:34s} median {median:7.2f} ms   p90 {p90:7.2f} ms")
        print(
            f"  page: {len(page.content) / 1024:.0f} KiB, "
            f"{len(page_q)} queries; mark: {len(mark_q)} queries"
        )
    finally:
        teardown_databases(old, verbosity=0)


def _time(fn, rounds: int) -> tuple[float, float]:
    """Return the median and 90th-percentile milliseconds of fn(i), each answering 200."""

    def call(i: int):
        response = fn(i)
        assert response.status_code == 200, response.status_code
        return response

    timing = timed(call, rounds=rounds, warmup=3, count_queries=False)
    return timing.median * 1000, timing.p90 * 1000


def _urls():
    import types

    from django.http import HttpResponse
    from django.urls import include, path

    module = types.ModuleType("bench_review_urls")
    from core.permissions import require

    module.urlpatterns = [
        path("bench-bare/", lambda request: HttpResponse("ok")),
        path("bench-bare-review/", require("review")(lambda request: HttpResponse("ok"))),
        path("", include("console.urls")),
    ]
    return module


def _fixture():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from core.roles import roles_sync
    from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
    from evals.judging.models import Judge, Verdict
    from evals.rules.models import Rule, RuleVersion
    from labeling.models import DailySample, SampleItem
    from labeling.services.queue import sample_claim_next

    roles_sync()
    user = get_user_model().objects.create_user("bench-reviewer", password="bench-pw-1234")
    user.groups.add(Group.objects.get(name="reviewer"))
    agent = Agent.objects.create(name="phone-screen")
    version = AgentVersion.objects.create(agent=agent, version="2026-11-28.1")
    t = Transcript.objects.create(
        external_id="call-bench",
        agent_version=version,
        checksum="0" * 64,
        audio_url="https://rec.example.com/call-bench.ogg",
    )
    phases = ["opening", "asking", "asking", "asking", "closing"]
    Turn.objects.bulk_create(
        Turn(
            transcript=t,
            index=i,
            speaker="agent" if i % 2 == 0 else "user",
            phase=phases[i * 5 // TURNS],
            text=(
                "Could you tell me more about how you approached that part of "
                "the project, and what you would do differently next time? "
            )
            * (1 + i % 3),
            start_ms=i * 4000,
            end_ms=i * 4000 + 3600,
        )
        for i in range(TURNS)
    )
    judge = Judge.objects.create(name="gpt-4o-mini/conduct-v3", kind="llm")
    verdicts = []
    for n in range(VERDICTS):
        rule = Rule.objects.create(rule_id=f"asking.rule-{n:02d}", group="asking")
        rv = RuleVersion.objects.create(
            rule=rule, number=1, text="Ask one question per turn and wait for the answer."
        )
        flagged = n < FLAGGED
        turn = (n * 13) % TURNS if flagged else None
        verdicts.append(
            Verdict(
                transcript=t,
                rule_version=rv,
                judge=judge,
                flagged=flagged,
                turn=turn,
                turns=[turn] if flagged else [],
                severity="minor",
                rationale="The agent asked two questions in one turn.",
                confidence=70,
            )
        )
    Verdict.objects.bulk_create(verdicts)
    sample = DailySample.objects.create(day=timezone.localdate(), size=1, params={"drawn": True})
    SampleItem.objects.create(
        sample=sample, transcript=t, reason="uniform", inclusion_probability=1.0
    )
    assert sample_claim_next(reviewer=user) is not None
    client = Client()
    client.force_login(user)
    ids = list(Verdict.objects.filter(transcript=t).values_list("pk", flat=True))
    return (
        client,
        reverse("review-call", args=[t.external_id]),
        [reverse("review-mark", args=[t.external_id, pk]) for pk in ids],
    )


if __name__ == "__main__":
    if "--child" in sys.argv:
        child(int(sys.argv[sys.argv.index("--child") + 1]))
    else:
        main()
