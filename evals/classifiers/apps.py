"""Runtime turn classifiers, their detectors and thresholds."""

from django.apps import AppConfig


class ClassifiersConfig(AppConfig):
    name = "evals.classifiers"
    label = "classifiers"
    verbose_name = "Classifiers"

    def ready(self):
        from evals.classifiers import (
            checks,
            detectors,  # noqa: F401 (registers the detectors)
        )
        from evals.judging import registry

        registry.verdict_hook_register(checks.verdict_categories_put)
