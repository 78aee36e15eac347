"""The eval run's Celery task: a whole run, its rows' calls in a thread pool."""

from celery import shared_task
from django.conf import settings

from evals.evalruns.services.runs import EVAL_RUN_TASK, eval_run_execute


# One task runs a whole eval run (its rows' calls in a thread pool), so it gets its own time
# limits instead of CELERY_TASK_*_TIME_LIMIT; past the soft one the run closes as failed, keeping
# the rows it scored.
@shared_task(
    name=EVAL_RUN_TASK,
    bind=True,
    acks_late=True,
    soft_time_limit=settings.EVAL_RUN_TIME_LIMIT_S,
    time_limit=settings.EVAL_RUN_TIME_LIMIT_S + 120,
)
def eval_run_task(self, run_id: int) -> str:
    """Run an eval run to its end (its rows' calls run in a thread pool of its concurrency)."""
    return eval_run_execute(run_id=run_id).status
