"""Celery tasks of the labeling app: thin, idempotent wrappers over services."""

from datetime import date

from celery import shared_task
from django.utils import timezone

from labeling.services.sampling import daily_sample_make


@shared_task
def daily_sample_make_task(day: str | None = None) -> int:
    """Draw the day's sample (today by default); run by
    Celery beat at DOCKET_SAMPLE_HOUR. Returns its id."""
    the_day = date.fromisoformat(day) if day else timezone.localdate()
    return daily_sample_make(day=the_day)[0].pk
