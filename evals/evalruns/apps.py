"""Datasets, eval runs, rubrics and the agent runner."""

from django.apps import AppConfig


class EvalrunsConfig(AppConfig):
    name = "evals.evalruns"
    label = "evalruns"
    verbose_name = "Eval runs"

    def ready(self):
        from core.import_kinds import import_kind_register
        from evals.evalruns import (
            gate_metrics,
            selectors,
            tasks,  # noqa: F401 (registers the Celery tasks)
        )
        from evals.evalruns.services.datasets import DATASETS_KIND
        from evals.gating.decision import metric_kind_register
        from evals.gating.registry import GateSource, gate_source_register
        from evals.webhooks.events import webhook_event_register

        import_kind_register(DATASETS_KIND)
        webhook_event_register("eval_run.finished", "an eval run finished or failed")
        metric_kind_register(gate_metrics.KIND)
        gate_source_register(
            GateSource(
                name=gate_metrics.LAYER,
                kinds=(gate_metrics.EVAL_PASS_RATE,),
                version_facts=selectors.eval_run_facts,
            )
        )
