"""Golden sets, gates, gate runs, the pure gate decision and its metric kinds."""

from django.apps import AppConfig


class GatingConfig(AppConfig):
    name = "evals.gating"
    label = "gating"
    verbose_name = "Gating"

    def ready(self):
        from evals.gating import tasks  # noqa: F401 (registers the Celery tasks)
        from evals.webhooks.events import webhook_event_register

        webhook_event_register("gate_run.finished", "a gate run was decided, or could not run")
