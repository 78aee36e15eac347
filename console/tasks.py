"""The shell's Celery task: the periodic sweep (Celery beat, every DOCKET_RECOVER_INTERVAL_S)."""

from celery import shared_task

from console.services import runs_recover


@shared_task(name="console.tasks.runs_recover_task")
def runs_recover_task() -> dict[str, int]:
    """Queue again the work of dead workers (console.services.runs_recover)."""
    return runs_recover().as_dict()
