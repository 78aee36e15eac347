"""Webhooks: operators register URLs for events; Docket POSTs each event there, signed.

`webhook_emit(event=..., payload=...)` is called by the service that makes the event happen,
inside its transaction: it records one delivery per subscribed webhook and queues the sending
after the commit (core.background.after_commit), so a rolled-back transaction sends nothing.
The Celery task (evals.webhooks.tasks) makes one attempt at a time and retries with
backoff (DOCKET_WEBHOOK_BACKOFF_S, doubling) up to DOCKET_WEBHOOK_MAX_ATTEMPTS; every attempt
stays on the delivery with the status, the time and the length of its answer (never its text).
The URL is checked when saved and its host again when sent (core.egress).

A POST's body is `{"id": delivery uuid, "event": ..., "created_at": ..., "data": payload}`, with
the headers Content-Type: application/json, Docket-Event, Docket-Delivery (the same on every
retry) and Docket-Signature (see evals.webhooks.signing for its format and how to check it).
"""

from __future__ import annotations

import http.client
import logging
import secrets
import time
import uuid
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.background import after_commit
from core.egress import EgressRefused, egress_connect, egress_url_clean
from core.errors import DomainError, NotFound
from core.leases import lease_expired_before
from evals.webhooks.events import WEBHOOK_EVENTS
from evals.webhooks.models import Webhook, WebhookDelivery
from evals.webhooks.signing import HEADER, webhook_signature

logger = logging.getLogger(__name__)

# The Celery task of one delivery (evals.webhooks.tasks), queued by name.
DELIVER_TASK = "evals.tasks.webhook_deliver_task"

ANSWER_COUNT_MAX = 1 << 20  # an answer's bytes are counted up to 1 MiB, then left unread
NO_ANSWER = "no answer"
ADDRESS_REFUSED = "refused: the host is not a public address"
DELIVERED, RETRY, FAILED = "delivered", "retry", "failed"
BACKOFF_CAP_S = 3600


def webhook_events_clean(events) -> list[str]:
    """Return the events in the registry's order, or raise DomainError naming an unknown one."""
    if isinstance(events, str):
        events = [e.strip() for e in events.split(",") if e.strip()]
    if not isinstance(events, (list, tuple)) or not events:
        raise DomainError(f"one or more of: {', '.join(WEBHOOK_EVENTS)}", field="events")
    unknown = [e for e in events if e not in WEBHOOK_EVENTS]
    if unknown:
        raise DomainError(
            f"unknown event {unknown[0]!r}; one of {', '.join(WEBHOOK_EVENTS)}", field="events"
        )
    return [e for e in WEBHOOK_EVENTS if e in events]


@transaction.atomic
def webhook_create(
    *, url: str, events, description: str = "", by: str = "", secret: str = ""
) -> Webhook:
    """Register a webhook; its secret is generated unless given."""
    return Webhook.objects.create(
        url=egress_url_clean(url),
        events=webhook_events_clean(events),
        description=(description or "")[:200],
        secret=secret or secrets.token_hex(32),
        created_by=by,
    )


@transaction.atomic
def webhook_update(*, webhook: Webhook, **changes) -> Webhook:
    """Change a webhook's url, events, description or active flag."""
    if "url" in changes:
        webhook.url = egress_url_clean(changes["url"])
    if "events" in changes:
        webhook.events = webhook_events_clean(changes["events"])
    if "description" in changes:
        webhook.description = (changes["description"] or "")[:200]
    if "active" in changes:
        webhook.active = bool(changes["active"])
    webhook.save()
    return webhook


@transaction.atomic
def webhook_emit(*, event: str, payload: dict) -> list[WebhookDelivery]:
    """Record a delivery of `event` for each active webhook subscribed to it, sent after commit."""
    if event not in WEBHOOK_EVENTS:
        raise DomainError(f"unknown webhook event {event!r}", field="event")
    hooks = [h for h in Webhook.objects.filter(active=True) if event in (h.events or [])]
    deliveries = [
        WebhookDelivery.objects.create(
            webhook=h, uuid=uuid.uuid4(), event=event, payload=_jsonable(payload)
        )
        for h in hooks
    ]
    if deliveries:
        for d in deliveries:
            after_commit(DELIVER_TASK, d.pk, finish_at_exit=True)
        logger.info("webhook_emitted", extra={"event": event, "deliveries": len(deliveries)})
    return deliveries


def _jsonable(payload: dict) -> dict:
    return orjson.loads(orjson.dumps(payload, default=str))


def webhook_body(delivery: WebhookDelivery) -> bytes:
    """The exact bytes POSTed for a delivery (the same on every attempt)."""
    return orjson.dumps(
        {
            "id": str(delivery.uuid),
            "event": delivery.event,
            "created_at": delivery.created_at.isoformat(),
            "data": delivery.payload,
        },
        option=orjson.OPT_SORT_KEYS,
    )


def webhook_backoff_s(attempt: int) -> float:
    """Seconds to wait after the `attempt`-th failed attempt (1-based): base, 2x base, 4x ..."""
    return min(BACKOFF_CAP_S, settings.DOCKET_WEBHOOK_BACKOFF_S * 2 ** max(0, attempt - 1))


class _CheckedConnect:
    """Connects only to an address core.egress checked, resolved once (no DNS rebinding); over
    TLS the certificate is still checked against the URL's host name."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = lambda address, timeout, *_: egress_connect(*address, timeout)


class _Connection(_CheckedConnect, http.client.HTTPConnection):
    pass


class _TLSConnection(_CheckedConnect, http.client.HTTPSConnection):
    pass


def _post(url: str, body: bytes, headers: dict) -> tuple[int | None, int | None, str]:
    """POST and return (status or None, length of the answer or None, error).

    Only the status and the length of an answer are kept: its text may be anything the receiver
    (or a service behind it) says. A redirect is an answer (not followed). Every failure to get
    an answer reads the same ("no answer"), so the errors cannot map which ports are open.
    """
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    connection_class = _TLSConnection if tls else _Connection
    connection = connection_class(
        parts.hostname, parts.port, timeout=settings.DOCKET_WEBHOOK_TIMEOUT_S
    )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        length = 0
        while length < ANSWER_COUNT_MAX and (chunk := response.read(65536)):
            length += len(chunk)
        status = response.status
    except EgressRefused:
        return None, None, ADDRESS_REFUSED
    except (OSError, ValueError, http.client.HTTPException):
        return None, None, NO_ANSWER
    finally:
        connection.close()
    return status, length, "" if 200 <= status < 300 else f"HTTP {status}"


def webhook_delivery_attempt(*, delivery_id: int) -> str:
    """Make one attempt at a delivery; return "delivered", "retry" (try again after
    webhook_backoff_s) or "failed" (given up, or already finished)."""
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None:
        return FAILED
    if delivery.status == WebhookDelivery.Status.DELIVERED:
        return DELIVERED
    if delivery.status == WebhookDelivery.Status.FAILED:
        return FAILED
    body = webhook_body(delivery)
    sent_at = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Docket-Webhooks/1",
        "Docket-Event": delivery.event,
        "Docket-Delivery": str(delivery.uuid),
        HEADER: webhook_signature(secret=delivery.webhook.secret, timestamp=sent_at, body=body),
    }
    started = time.monotonic()
    status, length, error = _post(delivery.webhook.url, body, headers)
    ms = round((time.monotonic() - started) * 1000)
    ok = status is not None and 200 <= status < 300
    attempt = {"at": timezone.now().isoformat(), "status": status, "error": error, "ms": ms}
    attempts = [*delivery.attempts, {**attempt, "length": length}]
    if ok:
        outcome, new_status = DELIVERED, WebhookDelivery.Status.DELIVERED
    elif len(attempts) >= settings.DOCKET_WEBHOOK_MAX_ATTEMPTS:
        outcome, new_status = FAILED, WebhookDelivery.Status.FAILED
    else:
        outcome, new_status = RETRY, WebhookDelivery.Status.RETRYING
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=attempts,
        status=new_status,
        response_status=status,
        response_length=length,
        error=error,
        delivered_at=timezone.now() if ok else None,
    )
    logger.info(
        "webhook_attempt",
        extra={
            "delivery": delivery.pk,
            "webhook": delivery.webhook_id,
            "event": delivery.event,
            "http_status": status,
            "attempt": len(attempts),
            "outcome": outcome,
        },
    )
    return outcome


def webhook_delivery_give_up(*, delivery_id: int, error: str) -> None:
    """Close a delivery as failed (the task crashed or ran out of retries)."""
    WebhookDelivery.objects.filter(pk=delivery_id).exclude(
        status=WebhookDelivery.Status.DELIVERED
    ).update(status=WebhookDelivery.Status.FAILED, error=error[:500])


def webhook_get(pk: int) -> Webhook:
    hook = Webhook.objects.filter(pk=pk).first()
    if hook is None:
        raise NotFound(f"no webhook {pk}")
    return hook


def webhook_link(path: str) -> str:
    """An absolute link to a console page when DOCKET_PUBLIC_URL is set, else the path."""
    return f"{settings.DOCKET_PUBLIC_URL}{path}"


def webhook_deliveries_recover(*, now=None) -> list[int]:
    """Return the deliveries a restart left unsent: pending or retrying, and overdue by more than
    a lease (DOCKET_RUN_LEASE_S) for their next attempt, whose task was lost (the sweep queues
    them again; a receiver dedupes on Docket-Delivery should a late task send one too)."""
    now = now or timezone.now()
    expired = lease_expired_before(now)
    out = []
    waiting = WebhookDelivery.objects.filter(
        status__in=[WebhookDelivery.Status.PENDING, WebhookDelivery.Status.RETRYING],
        created_at__lt=expired,
    ).only("pk", "attempts", "created_at")
    for d in waiting.order_by("pk"):
        due = d.created_at
        if d.attempts:
            last = datetime.fromisoformat(d.attempts[-1]["at"])
            due = last + timedelta(seconds=webhook_backoff_s(len(d.attempts)))
        if due < expired:
            out.append(d.pk)
    if out:
        logger.warning("webhook_deliveries_recovered", extra={"deliveries": len(out)})
    return out
