"""Webhooks against a real local HTTP receiver: signed bodies, a retry after a 500, nothing for a
rolled-back transaction, the events gate runs and promotion send, and the pages and API."""

import json
import time

import pytest
from django.db import OperationalError, transaction
from django.test import Client

from evals.webhooks.models import Webhook, WebhookDelivery
from evals.webhooks.services import webhook_create, webhook_emit
from evals.webhooks.signing import (
    webhook_signature,
    webhook_signature_parse,
    webhook_signature_valid,
)
from tests.evals.gating_helpers import wait_for_gate_run
from tests.evals.webhook_receiver import Receiver
from tests.factories import token_client


@pytest.fixture
def receiver(settings):
    settings.DOCKET_EGRESS_ALLOW_NETWORKS = ["127.0.0.1/32"]  # the test server's address only
    settings.DOCKET_WEBHOOK_BACKOFF_S = 0.05
    settings.DOCKET_WEBHOOK_TIMEOUT_S = 5
    server = Receiver().start()
    yield server
    server.stop()


def wait_for_delivery(pk: int, limit_s: float = 30) -> WebhookDelivery:
    """Wait until a delivery is delivered or given up (it is sent from a thread here)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            d = WebhookDelivery.objects.get(pk=pk)
        except OperationalError:  # SQLite's shared-cache test database locks while it writes
            d = None
        if d is not None and d.status in ("delivered", "failed"):
            return d
        time.sleep(0.05)
    raise AssertionError(f"delivery {pk} did not finish")


def test_signature_checks_body_secret_and_age():
    body = b'{"event":"gate_run.finished"}'
    header = webhook_signature(secret="s3cret", timestamp=1_764_576_000, body=body)
    assert header.startswith("t=1764576000,v1=") and len(header.split("v1=")[1]) == 64
    assert webhook_signature_parse(header)[0] == 1_764_576_000
    ok = {"secret": "s3cret", "header": header, "body": body}
    assert webhook_signature_valid(**ok, now=1_764_576_100)
    assert not webhook_signature_valid(**ok, now=1_764_576_000 + 301)  # a replay, too late
    assert not webhook_signature_valid(**{**ok, "body": body + b" "}, now=1_764_576_000)
    assert not webhook_signature_valid(**{**ok, "secret": "other"}, now=1_764_576_000)
    assert not webhook_signature_valid(**{**ok, "header": "v1=abc"}, now=1_764_576_000)


@pytest.mark.django_db(transaction=True)
def test_gate_run_finished_is_signed_and_retried_after_a_500(world, lead, engineer, receiver):
    receiver.statuses = [500]
    r = token_client(lead).post(
        "/api/v1/webhooks/",
        {"url": receiver.url, "events": ["gate_run.finished"], "description": "CI"},
        format="json",
    )
    assert r.status_code == 201, r.content
    hook = r.json()
    assert hook["events"] == ["gate_run.finished"] and len(hook["secret"]) == 64

    r = token_client(engineer).post(
        "/api/v1/gate-runs/", {"gate": "release", "candidate": "2026-11-21.1"}, format="json"
    )
    assert r.status_code == 202, r.content
    run = wait_for_gate_run(r.json()["id"])
    delivery = wait_for_delivery(WebhookDelivery.objects.get(event="gate_run.finished").pk)

    posts = receiver.wait_for(2)
    assert len(posts) == 2  # the 500, then the retry that got 200
    for post in posts:
        h = post["headers"]
        assert h["Docket-Event"] == "gate_run.finished"
        assert h["Docket-Delivery"] == str(delivery.uuid)
        assert h["Content-Type"] == "application/json"
        assert webhook_signature_valid(
            secret=hook["secret"], header=h["Docket-Signature"], body=post["body"]
        )
        assert not webhook_signature_valid(
            secret="wrong" * 8, header=h["Docket-Signature"], body=post["body"]
        )
    assert posts[0]["body"] == posts[1]["body"]
    body = json.loads(posts[1]["body"])
    assert body["event"] == "gate_run.finished" and body["id"] == str(delivery.uuid)
    assert body["data"]["gate_run"] == run.pk and body["data"]["status"] == "pass"
    assert body["data"]["gate"] == "release" and body["data"]["candidate"] == "2026-11-21.1"
    assert body["data"]["url"].endswith(f"/gates/runs/{run.pk}/")

    assert delivery.status == "delivered" and delivery.response_status == 200
    assert [a["status"] for a in delivery.attempts] == [500, 200]
    assert delivery.attempts[0]["error"] == "HTTP 500"

    listed = token_client(lead).get(f"/api/v1/webhook-deliveries/?webhook={hook['id']}").json()
    assert listed["count"] == 1
    row = listed["results"][0]
    assert row["status"] == "delivered" and row["response_status"] == 200
    assert [a["status"] for a in row["attempts"]] == [500, 200]
    # The answer's length is kept, never its text ({"ok": true} is 12 bytes).
    assert row["response_length"] == 12 and "response_body" not in row
    assert [a["length"] for a in row["attempts"]] == [len(b"receiver broke"), 12]
    browser = Client()
    browser.force_login(lead)
    page = browser.get(f"/webhooks/{hook['id']}/").content.decode()
    assert "12 bytes" in page and "14 bytes" in page
    assert "receiver broke" not in page and '"ok": true' not in page


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_for_a_rolled_back_transaction(receiver):
    webhook_create(url=receiver.url, events=["gate_run.finished", "rule_version.promoted"])

    class Boom(Exception):
        pass

    with pytest.raises(Boom), transaction.atomic():
        webhook_emit(event="rule_version.promoted", payload={"rule": "rolled.back"})
        raise Boom
    assert not WebhookDelivery.objects.exists()
    # A committed event afterwards is sent: the receiver got that one and only that one.
    (sent,) = webhook_emit(event="gate_run.finished", payload={"gate_run": 7})
    wait_for_delivery(sent.pk)
    time.sleep(0.3)  # anything wrongly queued for the rolled-back event would have arrived
    posts = receiver.wait_for(1)
    assert [json.loads(p["body"])["data"] for p in posts] == [{"gate_run": 7}]


@pytest.mark.django_db(transaction=True)
def test_a_receiver_that_keeps_failing_is_given_up_after_the_last_attempt(receiver, settings):
    settings.DOCKET_WEBHOOK_MAX_ATTEMPTS = 3
    receiver.statuses = [500, 503, 502, 200]
    webhook_create(url=receiver.url, events=["gate_run.finished"])
    (d,) = webhook_emit(event="gate_run.finished", payload={"gate_run": 1})
    d = wait_for_delivery(d.pk)
    assert d.status == "failed" and d.response_status == 502 and d.error == "HTTP 502"
    assert [a["status"] for a in d.attempts] == [500, 503, 502]
    assert len(receiver.requests) == 3


@pytest.mark.django_db(transaction=True)
def test_a_receiver_that_never_answers_is_recorded_as_no_answer(settings):
    settings.DOCKET_EGRESS_ALLOW_NETWORKS = ["127.0.0.1/32"]
    settings.DOCKET_WEBHOOK_MAX_ATTEMPTS = 2
    settings.DOCKET_WEBHOOK_BACKOFF_S = 0.01
    webhook_create(url="http://127.0.0.1:9/closed", events=["gate_run.finished"])
    (d,) = webhook_emit(event="gate_run.finished", payload={})
    d = wait_for_delivery(d.pk)
    assert d.status == "failed" and d.response_status is None
    assert [(a["status"], a["error"], a["length"]) for a in d.attempts] == [
        (None, "no answer", None)
    ] * 2


@pytest.mark.django_db
def test_only_active_webhooks_subscribed_to_the_event_get_it(django_capture_on_commit_callbacks):
    a = webhook_create(url="https://a.example/hook", events=["gate_run.finished"])
    webhook_create(url="https://b.example/hook", events=["rule_version.demoted"])
    paused = webhook_create(url="https://c.example/hook", events=["gate_run.finished"])
    paused.active = False
    paused.save()
    with django_capture_on_commit_callbacks() as callbacks:
        sent = webhook_emit(event="gate_run.finished", payload={"x": 1})
    assert [d.webhook_id for d in sent] == [a.pk] and len(callbacks) == 1
    with pytest.raises(Exception, match="unknown webhook event"):
        webhook_emit(event="gate_run.started", payload={})


@pytest.mark.django_db
def test_promote_and_demote_send_their_events(lead, reviewer):
    from labeling.services.promotion import rule_version_demote, rule_version_promote
    from tests import factories as f
    from tests.labeling.known_calibration import make_marked

    hook = webhook_create(
        url="https://ci.example/hook", events=["rule_version.promoted", "rule_version.demoted"]
    )
    judge = f.JudgeFactory()
    rv = f.RuleVersionFactory(rule=f.RuleFactory(rule_id="asking.one-question"), number=2)
    make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
    rule_version_promote(rule_version=rv, actor=lead, reason="clears the floors")
    rule_version_demote(rule_version=rv, actor=lead, reason="judge drifted")
    promoted, demoted = WebhookDelivery.objects.filter(webhook=hook).order_by("pk")
    assert (promoted.event, demoted.event) == ("rule_version.promoted", "rule_version.demoted")
    assert promoted.payload["rule"] == "asking.one-question" and promoted.payload["version"] == 2
    assert promoted.payload["status"] == "gated" and promoted.payload["actor"] == "lena"
    assert promoted.payload["marked"] == 240 and promoted.payload["reason"] == "clears the floors"
    assert demoted.payload["status"] == "candidate" and demoted.payload["reason"] == "judge drifted"


@pytest.mark.django_db
def test_api_refuses_unknown_events_and_bad_urls(lead):
    c = token_client(lead)
    r = c.post("/api/v1/webhooks/", {"url": "https://x.example/h", "events": ["nope"]}, "json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"].startswith("events")
    r = c.post("/api/v1/webhooks/", {"url": "ftp://x.example/h", "events": ["gate_run.finished"]})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "url"
    r = c.post(
        "/api/v1/webhooks/", {"url": "https://x.example/h", "events": ["eval_run.finished"]}, "json"
    )
    assert r.status_code == 201
    pk = r.json()["id"]
    r = c.patch(f"/api/v1/webhooks/{pk}/", {"active": False}, format="json")
    assert r.status_code == 200 and r.json()["active"] is False
    assert c.get("/api/v1/webhook-deliveries/?status=green").status_code == 400
    assert c.delete(f"/api/v1/webhooks/{pk}/").status_code == 204
    assert not Webhook.objects.exists()


@pytest.mark.django_db
def test_lead_registers_a_webhook_on_the_page_and_reads_its_deliveries(client, lead):
    client.force_login(lead)
    r = client.post(
        "/webhooks/", {"url": "https://ci.example/hook", "events": ["gate_run.finished"]}
    )
    hook = Webhook.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/webhooks/{hook.pk}/"
    WebhookDelivery.objects.create(
        webhook=hook,
        uuid="6f1c2d9e-0000-4000-8000-000000000001",
        event="gate_run.finished",
        payload={"gate_run": 3},
        status="delivered",
        attempts=[{"at": "2026-12-01T08:00:00+00:00", "status": 500, "error": "HTTP 500", "ms": 4}],
        response_status=204,
    )
    page = client.get(f"/webhooks/{hook.pk}/").content.decode()
    assert "gate_run.finished" in page and "HTTP 204" in page and "HTTP 500" in page
    assert hook.secret in page
    listing = client.get("/webhooks/").content.decode()
    assert "https://ci.example/hook" in listing and "delivered" in listing
    bad = client.post("/webhooks/", {"url": "https://ci.example/hook"})
    assert bad.status_code == 400 and "events" in bad.content.decode()
    client.post(f"/webhooks/{hook.pk}/toggle/")
    hook.refresh_from_db()
    assert hook.active is False


def test_a_command_that_ends_at_once_still_sends_its_webhook(receiver, tmp_path):
    """Without a broker a delivery runs in a thread: a management command that emits an event
    and exits waits for it (core.background's finish_at_exit), so CI's webhooks are not lost."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")},
        "DJANGO_DEBUG": "1",
        "DOCKET_VAR_DIR": str(tmp_path),
        "DOCKET_LOG_LEVEL": "WARNING",
        "DOCKET_EGRESS_ALLOW_NETWORKS": "127.0.0.1/32",
    }
    manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, timeout=300)
    script = (
        "from evals.webhooks.services import webhook_create, webhook_emit\n"
        f"webhook_create(url={receiver.url!r}, events=['rule_version.demoted'])\n"
        "webhook_emit(event='rule_version.demoted', payload={'rule': 'asking.one-question'})\n"
    )
    done = subprocess.run(
        [*manage, "shell", "-c", script],
        check=False,
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (post,) = receiver.requests  # sent before the process ended
    assert json.loads(post["body"])["data"] == {"rule": "asking.one-question"}


REFUSED_URLS = [
    "http://127.0.0.1/hook",
    "http://localhost:5432/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://017700000001/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://192.0.2.1/",
    "ftp://ci.example/hook",
    "https://user:pw@ci.example/hook",
    "https://token@ci.example/hook",
    "https://ci.example:99999/hook",
    "https://ci.example:0/hook",
    "https://ci.example:http/hook",
    "https://ci.example/ho ok",
    "https://ci.example/hook\r\nX-Injected: 1",
    "https://ci.example/ho\tok",
    "https:///hook",
    "hook",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", REFUSED_URLS)
def test_a_url_that_is_not_public_or_not_clean_is_refused_when_saved(lead, url):
    r = token_client(lead).post(
        "/api/v1/webhooks/", {"url": url, "events": ["gate_run.finished"]}, format="json"
    )
    assert r.status_code == 400, (url, r.content)
    assert r.json()["errors"][0]["field"] == "url"
    assert not Webhook.objects.exists()


@pytest.mark.django_db
def test_the_page_the_update_and_the_admin_refuse_the_same_urls(client, lead, admin_client):
    client.force_login(lead)
    r = client.post("/webhooks/", {"url": "http://127.1:6379/", "events": ["gate_run.finished"]})
    assert r.status_code == 400 and "not a public address" in r.content.decode()
    hook = webhook_create(url="https://ci.example/hook", events=["gate_run.finished"])
    r = token_client(lead).patch(
        f"/api/v1/webhooks/{hook.pk}/", {"url": "http://[::1]:8000/admin/"}, format="json"
    )
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "url"
    r = admin_client.post(
        "/admin/webhooks/webhook/add/",
        {"url": "http://169.254.169.254/", "events": '["gate_run.finished"]', "secret": "s" * 20},
    )
    assert r.status_code == 200 and "not a public address" in r.content.decode()
    hook.refresh_from_db()
    assert Webhook.objects.count() == 1 and hook.url == "https://ci.example/hook"


@pytest.mark.django_db(transaction=True)
def test_a_saved_url_whose_host_now_resolves_inside_is_refused_when_sent(receiver, settings):
    """Checked again when sent: a host allowed when saved (here through the allow list, as a
    name whose DNS changed would be) and refused now is never connected to."""
    hook = webhook_create(url=receiver.url, events=["gate_run.finished"])
    settings.DOCKET_EGRESS_ALLOW_NETWORKS = []
    settings.DOCKET_WEBHOOK_MAX_ATTEMPTS = 1
    (d,) = webhook_emit(event="gate_run.finished", payload={})
    d = wait_for_delivery(d.pk)
    assert d.status == "failed" and receiver.requests == []
    assert d.error == "refused: the host is not a public address"
    assert d.webhook_id == hook.pk


@pytest.mark.django_db(transaction=True)
def test_a_redirect_is_an_answer_not_followed(receiver, settings):
    settings.DOCKET_WEBHOOK_MAX_ATTEMPTS = 1
    receiver.statuses = [302]
    webhook_create(url=receiver.url, events=["gate_run.finished"])
    (d,) = webhook_emit(event="gate_run.finished", payload={})
    d = wait_for_delivery(d.pk)
    assert d.status == "failed" and d.response_status == 302 and d.error == "HTTP 302"
    assert len(receiver.requests) == 1


@pytest.mark.django_db(transaction=True)
def test_a_closed_port_and_a_dropped_connection_read_the_same(settings):
    """No "refused" versus "disconnected": the errors cannot tell which ports are open."""
    import socket
    import threading

    settings.DOCKET_EGRESS_ALLOW_NETWORKS = ["127.0.0.1/32"]
    settings.DOCKET_WEBHOOK_MAX_ATTEMPTS = 1
    listener = socket.create_server(("127.0.0.1", 0))

    def drop():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.close()  # an open port that answers nothing

    threading.Thread(target=drop, daemon=True).start()
    port = listener.getsockname()[1]
    webhook_create(url=f"http://127.0.0.1:{port}/", events=["gate_run.finished"])
    webhook_create(url="http://127.0.0.1:9/", events=["gate_run.finished"])  # closed
    dropped, closed = webhook_emit(event="gate_run.finished", payload={})
    errors = {wait_for_delivery(d.pk).error for d in (dropped, closed)}
    listener.close()
    assert errors == {"no answer"}
