"""The shell's writes: the sweep that gives the work of a dead worker to a live one."""

import logging
from dataclasses import asdict, dataclass

from django.conf import settings
from django.utils import timezone

from core.background import task_named
from evals.evalruns.services import eval_runs_recover
from evals.evalruns.services.runs import EVAL_RUN_TASK
from evals.gating.services import gate_runs_recover
from evals.gating.services.gate_runs import GATE_RUN_TASK
from evals.judging.services.runs import judge_items_enqueue, judge_runs_recover
from evals.webhooks.services import (
    DELIVER_TASK,
    webhook_deliveries_recover,
    webhook_delivery_attempt,
)

logger = logging.getLogger(__name__)


@dataclass
class Recovered:
    judge_checks: int = 0  # checks of judge (and conversation) runs queued again
    judge_runs_failed: int = 0
    eval_runs: int = 0  # eval runs resumed from their pending rows
    eval_runs_failed: int = 0
    gate_runs: int = 0
    gate_runs_failed: int = 0  # ended as could-not-run
    deliveries: int = 0  # webhook deliveries sent again

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def runs_recover() -> Recovered:
    """Queue again the work whose worker died (its lease expired): judge and conversation runs'
    checks, eval runs (resumed from their pending rows), gate runs, webhook deliveries a restart
    left unsent; end as failed what was recovered DOCKET_RUN_MAX_RECOVERIES times without
    moving on. Without a broker the work runs here, before this returns (one attempt per
    delivery: the next sweep makes the next)."""
    now = timezone.now()
    judged = judge_runs_recover(now=now)
    evals = eval_runs_recover(now=now)
    gates = gate_runs_recover(now=now)
    deliveries = webhook_deliveries_recover(now=now)
    done = Recovered(
        judge_checks=len(judged["requeue"]),
        judge_runs_failed=len(judged["failed"]),
        eval_runs=len(evals["requeue"]),
        eval_runs_failed=len(evals["failed"]),
        gate_runs=len(gates["requeue"]),
        gate_runs_failed=len(gates["failed"]),
        deliveries=len(deliveries),
    )
    if any(done.as_dict().values()):
        logger.warning("runs_recovered", extra=done.as_dict())
    # Judge checks first: the gate runs queued again wait for them.
    judge_items_enqueue(judged["requeue"])
    for run_id in evals["requeue"]:
        task_named(EVAL_RUN_TASK).delay(run_id)
    for run_id in gates["requeue"]:
        task_named(GATE_RUN_TASK).delay(run_id)
    for delivery_id in deliveries:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            webhook_delivery_attempt(delivery_id=delivery_id)
        else:
            task_named(DELIVER_TASK).delay(delivery_id)
    return done
