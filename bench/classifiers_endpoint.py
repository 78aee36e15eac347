"""Part 2 of bench/classifiers.py: POST /api/v1/classify/{name}/ latency, LLM pass off and on.

Runs in-process (Django's test client: middleware, token auth, DRF, the classifier, the log line)
against a throwaway SQLite database and the tests' fake chat-completions server on 127.0.0.1, so
the figures are Docket's own overhead plus a local round trip, not a real model's latency.
"""

import json
import os
import statistics
import tempfile
import time

import support


def _percentiles(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms  max {ms[-1]:6.1f} ms"


def endpoint() -> None:
    tmp = tempfile.mkdtemp(prefix="docket-bench-classify-")
    support.django_setup(
        migrate=True,
        log_level="WARNING",
        DATABASE_URL=f"sqlite:///{tmp}/bench.sqlite3",
        DOCKET_API_USER_RATE="",
    )
    from django.conf import settings
    from django.test import Client

    from core.tokens import api_token_create
    from evals.catalog.models import Agent, AgentVersion
    from tests.evals.classifier_helpers import answer_classifiers
    from tests.evals.judge_server import FakeJudge
    from tests.factories import UserFactory

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    user = UserFactory(username="agent-runtime", roles=["engineer"])
    auth = {"HTTP_AUTHORIZATION": f"Token {api_token_create(user=user, name='bench')[1]}"}
    AgentVersion.objects.create(
        agent=Agent.objects.create(name="kettle"),
        version="3",
        instructions="You are Ava, Kettle & Co's support agent: orders, deliveries, returns.",
    )
    server = FakeJudge().start()
    answer_classifiers(server)
    settings.DOCKET_CLASSIFIER_BASE_URL = server.base_url
    client = Client()
    n = int(os.environ.get("BENCH_REQUESTS", "200"))
    turns = [{"speaker": "user", "text": "Where is my kettle?"}] * 4
    user_text = "Hi, my kettle arrived with a cracked lid and I'd like a replacement please."
    reply = "I'm sorry about the lid. I've opened a replacement order; it ships tomorrow."

    def run(label: str, name: str, body: dict, *, llm: bool, budget: float = 2.0, rounds=n):
        settings.DOCKET_INJECTION_LLM_CHECK_ENABLED = llm
        settings.DOCKET_CLASSIFIER_TIMEOUT_S = budget
        payload = json.dumps({**body, "agent": "kettle", "agent_version": "3", "tenant": "acme"})
        seconds, last = [], None
        for i in range(rounds + 5):
            start = time.perf_counter()
            r = client.post(
                f"/api/v1/classify/{name}/", payload, content_type="application/json", **auth
            )
            if i >= 5:  # the first few build the HTTP client and warm the caches
                seconds.append(time.perf_counter() - start)
            assert r.status_code == 200, r.content
            last = r.json()
        print(
            f"  {label:<44} {_percentiles(seconds)}  "
            f"(source {last['source']}{', degraded: ' + last['error'] if last['error'] else ''})"
        )

    try:
        run("injection, LLM pass off", "injection", {"text": user_text}, llm=False)
        run("injection, LLM pass on (fake server)", "injection", {"text": user_text}, llm=True)
        run("scope-drift (fake server)", "scope-drift", {"text": reply, "turns": turns}, llm=True)
        run(
            "frustration (fake server)",
            "frustration",
            {"text": user_text, "turns": turns},
            llm=True,
        )
        server.mode = "hang"
        server.hang_s = 5
        for label, name in (("injection", "injection"), ("scope-drift", "scope-drift")):
            run(
                f"{label}, model hangs, budget 0.5 s",
                name,
                {"text": user_text if name == "injection" else reply},
                llm=True,
                budget=0.5,
                rounds=min(n, 10),
            )
    finally:
        server.stop()
