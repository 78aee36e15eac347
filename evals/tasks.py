"""Celery tasks of the evals app: thin, take ids, own their retries."""

import logging
import time

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError

from evals.services.gating import gate_run_step
from evals.services.judging import judge_run_item_execute, judge_run_item_fail

logger = logging.getLogger(__name__)

MAX_RETRIES = 5


@shared_task(
    bind=True, acks_late=True, max_retries=MAX_RETRIES, rate_limit=settings.JUDGE_RATE_LIMIT or None
)
def judge_run_item_task(self, item_id: int) -> str:
    """Run one judge-run item; database hiccups retry
    with backoff, then the item is closed as an error."""
    try:
        return judge_run_item_execute(item_id=item_id)
    except DatabaseError as exc:
        if self.request.retries < MAX_RETRIES:
            countdown = min(60, 2**self.request.retries)
            if self.request.is_eager:
                time.sleep(countdown / 4)  # eager retries run at once: back off here instead
            raise self.retry(exc=exc, countdown=countdown) from None
        logger.error("judge_run_item.gave_up", extra={"item": item_id, "error": type(exc).__name__})
        judge_run_item_fail(
            item_id=item_id, error=f"gave up after {MAX_RETRIES} retries: {type(exc).__name__}"
        )
        return "error"
    except Exception as exc:  # one broken item never fails the run: record it and go on
        logger.exception(
            "judge_run_item.crashed", extra={"item": item_id, "error": type(exc).__name__}
        )
        judge_run_item_fail(item_id=item_id, error=f"internal error: {type(exc).__name__}")
        return "error"


@shared_task(bind=True, acks_late=True, max_retries=None)
def gate_run_task(self, run_id: int) -> str:
    """Take a gate run's next step; while its judge run works, look again in GATE_POLL_S seconds
    (a retry, so no worker is held while the judge's own tasks wait for one)."""
    state = gate_run_step(run_id=run_id)
    while state == "waiting" and self.request.is_eager:
        time.sleep(settings.GATE_POLL_S)  # eager retries would not wait: wait here instead
        state = gate_run_step(run_id=run_id)
    if state == "waiting":
        raise self.retry(countdown=settings.GATE_POLL_S)
    return state


@shared_task(bind=True, acks_late=True, max_retries=None)
def webhook_deliver_task(self, delivery_id: int) -> str:
    """POST one webhook delivery; on a non-2xx answer or no answer, try again after a backoff
    until DOCKET_WEBHOOK_MAX_ATTEMPTS (the attempts are counted on the delivery itself)."""
    from evals.services.webhooks import (
        RETRY,
        webhook_backoff_s,
        webhook_delivery_attempt,
        webhook_delivery_give_up,
    )

    failed_before = self.request.retries
    try:
        outcome = webhook_delivery_attempt(delivery_id=delivery_id)
        while outcome == RETRY and self.request.is_eager:
            # Eager retries would run at once: wait here instead (without a broker only).
            failed_before += 1
            time.sleep(webhook_backoff_s(failed_before))
            outcome = webhook_delivery_attempt(delivery_id=delivery_id)
    except Exception as exc:
        logger.exception(
            "webhook_deliver.crashed", extra={"delivery": delivery_id, "error": type(exc).__name__}
        )
        webhook_delivery_give_up(delivery_id=delivery_id, error=f"internal error: {exc!r}")
        return "failed"
    if outcome == RETRY:
        raise self.retry(countdown=webhook_backoff_s(failed_before + 1))
    return outcome


# One task runs a whole eval run (its rows' calls in a thread pool), so it gets its own time
# limits instead of CELERY_TASK_*_TIME_LIMIT; past the soft one the run closes as failed, keeping
# the rows it scored.
@shared_task(
    bind=True,
    acks_late=True,
    soft_time_limit=settings.EVAL_RUN_TIME_LIMIT_S,
    time_limit=settings.EVAL_RUN_TIME_LIMIT_S + 120,
)
def eval_run_task(self, run_id: int) -> str:
    """Run an eval run to its end (its rows' calls run in a thread pool of its concurrency)."""
    from evals.services.evalruns import eval_run_execute

    return eval_run_execute(run_id=run_id).status
