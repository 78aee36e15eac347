"""Webhook endpoints and deliveries: events POSTed, signed, retried."""

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "evals.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from evals.webhooks import tasks  # noqa: F401 (registers the Celery tasks)
