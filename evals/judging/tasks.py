"""The judge runner's Celery task: one judge-run item at a time, retried on database hiccups."""

import logging
import time

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError

from evals.judging.services.runs import ITEM_TASK, judge_run_item_execute, judge_run_item_fail

logger = logging.getLogger(__name__)

MAX_RETRIES = 5


@shared_task(
    name=ITEM_TASK,
    bind=True,
    acks_late=True,
    max_retries=MAX_RETRIES,
    rate_limit=settings.JUDGE_RATE_LIMIT or None,
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
