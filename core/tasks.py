"""Core's Celery task: an import from the page, run to its end."""

from celery import shared_task
from django.conf import settings

from core.import_jobs import IMPORT_TASK, import_job_run


# A large file takes longer than CELERY_TASK_*_TIME_LIMIT: an import has its own limit, past
# which its transaction rolls back and the page says so.
@shared_task(
    name=IMPORT_TASK,
    acks_late=True,
    soft_time_limit=settings.DOCKET_IMPORT_TIME_LIMIT_S,
    time_limit=settings.DOCKET_IMPORT_TIME_LIMIT_S + 120,
)
def import_job_task(job_id: int) -> str:
    """Import a queued file from the import page."""
    return import_job_run(job_id)
