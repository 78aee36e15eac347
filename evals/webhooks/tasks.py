"""The webhook delivery's Celery task: one attempt at a time, retried with a backoff."""

import logging
import time

from celery import shared_task
from django.db import DatabaseError

from evals.webhooks.services import (
    DELIVER_TASK,
    RETRY,
    webhook_backoff_s,
    webhook_delivery_attempt,
    webhook_delivery_give_up,
)

logger = logging.getLogger(__name__)


@shared_task(name=DELIVER_TASK, bind=True, acks_late=True, max_retries=None)
def webhook_deliver_task(self, delivery_id: int) -> str:
    """POST one webhook delivery; on a non-2xx answer or no answer, try again after a backoff
    until DOCKET_WEBHOOK_MAX_ATTEMPTS (the attempts are counted on the delivery itself)."""

    def attempt() -> str:
        # A database hiccup (SQLite's "table is locked" among threads) is tried again, a few
        # times, before the delivery is given up as an internal error.
        for wait in (0.1, 0.3, 1.0, 3.0):
            try:
                return webhook_delivery_attempt(delivery_id=delivery_id)
            except DatabaseError:
                time.sleep(wait)
        return webhook_delivery_attempt(delivery_id=delivery_id)

    failed_before = self.request.retries
    try:
        outcome = attempt()
        while outcome == RETRY and self.request.is_eager:
            # Eager retries would run at once: wait here instead (without a broker only).
            failed_before += 1
            time.sleep(webhook_backoff_s(failed_before))
            outcome = attempt()
    except Exception as exc:
        logger.exception(
            "webhook_deliver.crashed", extra={"delivery": delivery_id, "error": type(exc).__name__}
        )
        webhook_delivery_give_up(delivery_id=delivery_id, error=f"internal error: {exc!r}")
        return "failed"
    if outcome == RETRY:
        raise self.retry(countdown=webhook_backoff_s(failed_before + 1))
    return outcome
