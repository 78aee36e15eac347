"""Webhooks: operators register URLs for events; Docket POSTs each event there, signed.

`webhook_emit(event=..., payload=...)` is called by the service that makes the event happen,
inside its transaction: it records one delivery per subscribed webhook and queues the sending
after the commit (core.background.after_commit), so a rolled-back transaction sends nothing.
The Celery task (evals.webhooks.tasks) makes one attempt at a time and retries with
backoff (DOCKET_WEBHOOK_BACKOFF_S, doubling) up to DOCKET_WEBHOOK_MAX_ATTEMPTS; every attempt and
the last answer stay on the delivery.

A POST's body is `{"id": delivery uuid, "event": ..., "created_at": ..., "data": payload}`, with
the headers Content-Type: application/json, Docket-Event, Docket-Delivery (the same on every
retry) and Docket-Signature (see evals.webhooks.signing for its format and how to check it).
"""

from __future__ import annotations

import http.client
import logging
import secrets
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.background import after_commit
from core.errors import DomainError, NotFound
from core.leases import lease_expired_before
from evals.webhooks.events import WEBHOOK_EVENTS
from evals.webhooks.models import Webhook, WebhookDelivery
from evals.webhooks.signing import HEADER, webhook_signature

logger = logging.getLogger(__name__)

# The Celery task of one delivery (evals.webhooks.tasks), queued by name.
DELIVER_TASK = "evals.tasks.webhook_deliver_task"

ANSWER_MAX = 2000
DELIVERED, RETRY, FAILED = "delivered", "retry", "failed"
BACKOFF_CAP_S = 3600


def webhook_url_clean(url: str) -> str:
    """Return the URL if it is an absolute http(s) URL, else raise DomainError on `url`."""
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DomainError("an absolute http:// or https:// URL", field="url")
    if len(url) > 2000:
        raise DomainError("at most 2000 characters", field="url")
    return url


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
        url=webhook_url_clean(url),
        events=webhook_events_clean(events),
        description=(description or "")[:200],
        secret=secret or secrets.token_hex(32),
        created_by=by,
    )


@transaction.atomic
def webhook_update(*, webhook: Webhook, **changes) -> Webhook:
    """Change a webhook's url, events, description or active flag."""
    if "url" in changes:
        webhook.url = webhook_url_clean(changes["url"])
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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is the receiver's answer, recorded as such (not followed)


_opener = urllib.request.build_opener(_NoRedirect)


def _post(url: str, body: bytes, headers: dict) -> tuple[int | None, str, str]:
    """POST and return (status or None, answer text clipped, error)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _opener.open(request, timeout=settings.DOCKET_WEBHOOK_TIMEOUT_S) as response:
            return response.status, _clip(response.read(ANSWER_MAX * 4)), ""
    except urllib.error.HTTPError as e:
        try:
            text = _clip(e.read(ANSWER_MAX * 4))
        except (OSError, http.client.HTTPException):
            text = ""
        return e.code, text, f"HTTP {e.code}"
    except (OSError, ValueError, http.client.HTTPException) as e:  # no answer: refused, timeout,
        # TLS, DNS, a broken HTTP reply
        return None, "", f"{type(e).__name__}: {str(e)[:300]}"


def _clip(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")[:ANSWER_MAX]


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
    status, answer, error = _post(delivery.webhook.url, body, headers)
    ms = round((time.monotonic() - started) * 1000)
    ok = status is not None and 200 <= status < 300
    attempts = [
        *delivery.attempts,
        {"at": timezone.now().isoformat(), "status": status, "error": error, "ms": ms},
    ]
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
        response_body=answer,
        error="" if ok else error or f"HTTP {status}",
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
