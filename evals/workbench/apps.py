"""Rule drafts: a rule's new text (or detector parameters) judged before it ships."""

from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "evals.workbench"
    label = "workbench"
    verbose_name = "Rule workbench"

    def ready(self):
        from evals.judging import registry
        from evals.workbench import services

        # A draft is judged by the ordinary judge runner (its Celery tasks, cache, cost cap,
        # circuit breaker and progress), one item per call, and its verdicts go to DraftVerdict,
        # never to the verdicts that samples, gates and calibration count.
        registry.item_kind_register(
            registry.ItemKind(
                name=services.ITEM_KIND,
                run=services.draft_item_run,
                store=services.draft_verdict_put,
                failed=services.draft_item_failed,
            )
        )
