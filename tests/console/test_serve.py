"""Production serving (issue 27, item 8): `python -m console.serve` (what `make serve` runs)
checks the environment, migrates, collects the static files and runs gunicorn, a Celery worker
and beat under honcho; /healthz answers for the database and the broker. The serve test starts
it for real on PostgreSQL and Redis and drives a gate run through its worker."""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from console.serve import missing
from evals.judging.prompt import PROMPT_VERSION
from tests.console.test_setup import run
from tests.evals.gating_helpers import World
from tests.evals.judge_server import FakeJudge
from tests.factories import UserFactory, api_key

BASE_DIR = Path(__file__).resolve().parent.parent.parent
REDIS_URL = os.environ.get("DOCKET_TEST_REDIS_URL", "redis://127.0.0.1:6379/3")
SERVE_ENV = ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS")


def test_serve_names_what_the_environment_lacks():
    env = {k: v for k, v in os.environ.items() if k not in SERVE_ENV and k != "DJANGO_DEBUG"}
    env["DATABASE_URL"] = "sqlite:///var/docket.sqlite3"
    done = run(["-m", "console.serve"], env)
    assert done.returncode == 2, done.stderr
    for name in ("CELERY_BROKER_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS"):
        assert f"{name}: not set" in done.stderr
    assert "DATABASE_URL: must be a PostgreSQL URL (postgres://...), not sqlite" in done.stderr
    ready = {
        "DATABASE_URL": "postgres://docket@db/docket",
        "CELERY_BROKER_URL": "redis://broker:6379/0",
        "DJANGO_SECRET_KEY": "k" * 50,
        "DJANGO_ALLOWED_HOSTS": "docket.example.com",
    }
    assert missing(ready) == []
    # make serve runs the same, with its port and the processes asked for.
    make = ["make", "-n", "serve", "PORT=9100", "PROCESSES=web worker"]
    plan = subprocess.check_output(make, cwd=BASE_DIR, text=True)
    assert "-m console.serve --port 9100 web worker" in plan
    assert missing({**ready, "DJANGO_DEBUG": "1"}) == [
        "DJANGO_DEBUG: must be off to serve (it is for make run)"
    ]


@pytest.mark.django_db
def test_healthz_answers_without_a_login_and_names_a_failed_broker(client, settings):
    settings.CELERY_BROKER_URL = ""
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"database": "ok", "broker": "not configured"}
    assert "no-store" in r["Cache-Control"]
    # A broker nothing answers on (port 9): 503, naming it, and never its URL or password.
    settings.CELERY_BROKER_URL = "redis://:hunter2-broker@127.0.0.1:9/0"
    r = client.get("/healthz")
    assert r.status_code == 503
    body = r.json()
    assert body["database"] == "ok" and body["broker"].startswith("failed: ")
    assert "hunter2" not in r.content.decode() and "127.0.0.1" not in r.content.decode()
    assert client.post("/healthz").status_code == 405


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_url() -> str:
    """The URL of the test database pytest-django made, for the served processes."""
    s = connection.settings_dict
    auth = quote(s["USER"] or "", safe="")
    if s["PASSWORD"]:
        auth += ":" + quote(s["PASSWORD"], safe="")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _redis_reachable() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _get(url: str, token: str = "") -> tuple[int, dict]:
    req = urllib.request.Request(url, headers={"Authorization": f"Token {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_make_serve_serves_on_postgresql_and_its_worker_runs_a_gate(tmp_path):
    if not _redis_reachable():
        if os.environ.get("CI"):
            pytest.fail(f"Redis is not reachable at {REDIS_URL} and CI must run this test")
        pytest.skip(f"needs Redis at {REDIS_URL} (set DOCKET_TEST_REDIS_URL)")
    # The gating world; the candidate's "asking" verdicts are missing, so the gate run's worker
    # has the judge (the fake server) make them.
    world = World()
    world.judge.name = f"gpt-4o-mini/{PROMPT_VERSION}"  # the runner's judge
    world.judge.save()
    for i in range(3):
        world.calls[f"2026-11-28.1-{i}"].verdicts.filter(
            rule_version__rule__group="asking"
        ).delete()
    token = api_key(UserFactory(username="ci-release", roles=["engineer"]))
    judge = FakeJudge().start()
    judge.flag = {"asking.one-question": [2]}

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_DEBUG"}
    env.update(
        DATABASE_URL=_database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SSL_REDIRECT="0",  # plain HTTP here; a proxy in front redirects in production
        DOCKET_VAR_DIR=str(tmp_path),
        JUDGE_BASE_URL=judge.base_url,
        JUDGE_API_KEY="test-key",
        JUDGE_MODEL="gpt-4o-mini",
        JUDGE_COST_CAP_USD="0",
        WEB_CONCURRENCY="2",
        CELERY_CONCURRENCY="2",
    )
    log = (tmp_path / "serve.log").open("w")
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "console.serve", "--port", str(port)],
        cwd=BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: nothing is left behind on failure
    )

    def output() -> str:
        log.flush()
        return (tmp_path / "serve.log").read_text()[-4000:]

    try:
        health, deadline = None, time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = _get(f"{base}/healthz")
                break
            except OSError:
                time.sleep(0.5)
        assert health == (200, {"database": "ok", "broker": "ok"}), output()
        up_s = time.monotonic() - started

        req = urllib.request.Request(
            f"{base}/api/v1/gate-runs/",
            data=json.dumps({"gate": "release", "candidate": "2026-11-28.1"}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 202
            created = json.loads(r.read())
        status, run, deadline = 0, {}, time.monotonic() + 180
        while time.monotonic() < deadline:
            status, run = _get(f"{base}/api/v1/gate-runs/{created['id']}/", token)
            if run.get("status") not in ("pending", "running"):
                break
            time.sleep(0.5)
        assert status == 200 and run["status"] == "pass", (run, output())
        # The worker had the judge make the six missing verdicts, one call per transcript.
        assert run["judged"] == 6 and len(judge.requests) == 3
        gate_s = time.monotonic() - started - up_s
    finally:
        judge.stop()
        stopping = time.monotonic()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
        log.close()
    stop_s = time.monotonic() - stopping
    text = (tmp_path / "serve.log").read_text()
    # SIGTERM reached web, worker and beat, and each stopped by itself (no SIGKILL).
    assert rc == 143 and "SIGKILL" not in text, text[-3000:]
    for name in ("web", "worker", "beat"):
        assert f"{name}.1 stopped" in text
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
    print(
        f"serve: healthy after {up_s:.1f}s, a gate run through the worker in {gate_s:.1f}s, "
        f"all stopped {stop_s:.1f}s after SIGTERM"
    )
