"""The gate run's Celery task: one step at a time, looking again while its judge run works."""

import time

from celery import shared_task
from django.conf import settings

from evals.gating.services.gate_runs import GATE_RUN_TASK, gate_run_step


@shared_task(name=GATE_RUN_TASK, bind=True, acks_late=True, max_retries=None)
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
