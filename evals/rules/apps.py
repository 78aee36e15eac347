"""Rules, their immutable versions, and the detector registry."""

from django.apps import AppConfig


class RulesConfig(AppConfig):
    name = "evals.rules"
    label = "rules"
    verbose_name = "Rules"
