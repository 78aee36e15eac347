"""Benchmark: a 10,000-call OTLP stream and 10,000 voice-platform webhook posts, memory flat.

Needs PostgreSQL: DATABASE_URL=postgres://USER@HOST:PORT/NAME. The benchmark creates its own
database NAME_ingest_bench beside it and drops it at the end (BENCH_KEEP=1 keeps it). Requests go
through Django's test client in this process (the whole stack: middleware, DRF, token auth or the
platform's signature, the importer, the database), no network.

1. OTLP: BENCH_CALLS (10,000) traces shaped like examples/traces/otel-genai.json (an agent span,
   two chat spans, a tool span), BENCH_TRACES_PER_REQUEST (20) a request, each trace split across
   two requests (the second half of a batch's traces comes with the next batch), then every
   request sent again (the idempotent no-op).
2. Webhooks: BENCH_POSTS (10,000) signed posts cycling Vapi, Retell and ElevenLabs (the samples
   with a new call id each), then 1,000 of them again.

It prints requests a second, calls and turns stored, and the process's resident memory (now and
peak) at each tenth of the way: flat means the peak stops growing once the first requests ran.
"""

import copy
import json
import os
import resource
import time
from pathlib import Path
from urllib.parse import urlparse

from support import ROOT, django_setup, postgres_url, scratch_database

SAMPLES = ROOT / "examples" / "traces"


def rss_mb() -> tuple[float, float]:
    """(resident memory now, peak so far), in MB."""
    with open("/proc/self/statm") as f:
        now = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return now, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def progress(label: str, done: int, total: int, started: float) -> None:
    now, peak = rss_mb()
    rate = done / max(time.perf_counter() - started, 1e-9)
    print(f"  {label} {done:>6,}/{total:,}  {rate:7.1f}/s  rss {now:6.1f} MB  peak {peak:6.1f} MB")


def run(label: str, rounds: list, send, status: int, per: int | None = None) -> None:
    """Send every item, checking each answer; print progress and the rates."""
    from django.db import reset_queries

    started, cpu = time.perf_counter(), time.process_time()
    for i, item in enumerate(rounds, 1):
        response = send(item)
        assert response.status_code == status, response.content[:500]
        reset_queries()  # DEBUG keeps the queries: a bench must not measure that list
        if i % max(1, len(rounds) // 10) == 0 or i == len(rounds):
            progress(label, i, len(rounds), started)
    wall = time.perf_counter() - started
    calls = f", {per / wall:,.0f} calls/s" if per else ""
    print(
        f"  {label}: {wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU (this process), "
        f"{len(rounds) / wall:.1f} requests/s{calls}"
    )


def otlp_batches(n_calls: int, per_request: int) -> list[bytes]:
    template = json.loads((SAMPLES / "otel-genai.json").read_text())
    spans = template["resourceSpans"][0]["scopeSpans"][0]["spans"]

    def trace(i: int) -> list[dict]:
        out = []
        for s in spans:
            s = copy.deepcopy(s)
            s["traceId"] = f"{i:032x}"
            s["spanId"] = f"{int(s['spanId'], 16) ^ i:016x}"
            if "parentSpanId" in s:
                s["parentSpanId"] = f"{int(s['parentSpanId'], 16) ^ i:016x}"
            for a in s["attributes"]:
                if a["key"] == "gen_ai.conversation.id":
                    a["value"] = {"stringValue": f"bench-{i}"}
            out.append(s)
        return out

    def body(spans_: list[dict]) -> bytes:
        doc = copy.deepcopy({k: v for k, v in template.items()})
        doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans_
        return json.dumps(doc).encode()

    batches, carry = [], []
    for start in range(0, n_calls, per_request):
        ids = range(start, min(start + per_request, n_calls))
        half = len(ids) // 2
        now = [s for i in ids for s in trace(i)[:2]]  # the first half of every trace
        later = [s for i in ids[half:] for s in trace(i)[2:]]  # comes with the next request
        batches.append(body(carry + now + [s for i in ids[:half] for s in trace(i)[2:]]))
        carry = later
    if carry:
        batches.append(body(carry))
    return batches


def webhook_bodies(n: int) -> list[tuple[str, bytes]]:
    vapi = json.loads((SAMPLES / "vapi-end-of-call-report.json").read_text())
    retell = json.loads((SAMPLES / "retell-call-analyzed.json").read_text())
    eleven = json.loads((SAMPLES / "elevenlabs-post-call-transcription.json").read_text())
    out = []
    for i in range(n):
        platform = ("vapi", "retell", "elevenlabs")[i % 3]
        if platform == "vapi":
            vapi["message"]["call"]["id"] = f"bench-{i}"
            out.append((platform, json.dumps(vapi).encode()))
        elif platform == "retell":
            retell["call"]["call_id"] = f"bench-{i}"
            out.append((platform, json.dumps(retell).encode()))
        else:
            eleven["data"]["conversation_id"] = f"bench-{i}"
            out.append((platform, json.dumps(eleven).encode()))
    return out


def main() -> None:
    url = postgres_url("ingest.py", "docket", "OTLP and webhooks are measured where they run")
    name = f"{urlparse(url).path.lstrip('/') or 'docket'}_ingest_bench"
    n_calls = int(os.environ.get("BENCH_CALLS", "10000"))
    per_request = int(os.environ.get("BENCH_TRACES_PER_REQUEST", "20"))
    n_posts = int(os.environ.get("BENCH_POSTS", "10000"))
    with scratch_database(url, name=name) as scratch:
        django_setup(migrate=True, DATABASE_URL=scratch)
        from django.conf import settings
        from django.test import Client

        from core.tokens import api_token_create
        from evals.catalog.models import Transcript, Turn
        from evals.ingest.services import voice_hook_save
        from evals.ingest.signing import sign_headers
        from tests.factories import UserFactory

        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        platform = UserFactory(username="platform", roles=["engineer"])
        key = api_token_create(user=platform, name="bench")[1]
        client = Client(HTTP_AUTHORIZATION=f"Token {key}")
        print(f"start: rss {rss_mb()[0]:.1f} MB, load average {os.getloadavg()[0]:.1f}")

        batches = otlp_batches(n_calls, per_request)
        print(f"OTLP: {n_calls:,} traces in {len(batches):,} requests, each trace in two")

        def send(body: bytes):
            return client.post("/api/otel/v1/traces", body, content_type="application/json")

        for label, rounds in (("first", batches), ("again", batches)):
            run(f"otlp {label}", rounds, send, 200, per=n_calls)
        otlp_calls = Transcript.objects.filter(external_id__startswith="otel-").count()
        print(f"  stored: {otlp_calls:,} calls, {Turn.objects.count():,} turns")
        assert otlp_calls == n_calls, otlp_calls

        secret = "bench-secret-0123456789"
        for platform, agent_id in (
            ("vapi", "asst-repairs-01"),
            ("retell", "oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD"),
            ("elevenlabs", "agent_8201kb5m0x4ef9rt3hq2y7cnpd"),
        ):
            voice_hook_save(
                platform=platform,
                platform_agent_id=agent_id,
                agent=f"{platform}-bench",
                agent_version="1",
                secret=secret,
            )
        posts = webhook_bodies(n_posts)
        hooks = Client()
        print(f"webhooks: {n_posts:,} signed posts (Vapi, Retell, ElevenLabs in turn)")

        def post(item: tuple[str, bytes]):
            platform, body = item
            headers = {
                "HTTP_" + k.upper().replace("-", "_"): v
                for k, v in sign_headers(platform, body, secret).items()
            }
            return hooks.post(
                f"/api/v1/hooks/{platform}/", body, content_type="application/json", **headers
            )

        run("hooks first", posts, post, 201)
        run("hooks again", posts[:1000], post, 200)
        hook_calls = Transcript.objects.exclude(external_id__startswith="otel-").count()
        print(f"  stored: {hook_calls:,} calls; load average {os.getloadavg()[0]:.1f}")
        assert hook_calls == n_posts, hook_calls


if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    main()
