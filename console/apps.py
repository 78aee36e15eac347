from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Console"

    def ready(self):
        from console import tasks  # noqa: F401  (the sweep's task, which Celery beat runs)
