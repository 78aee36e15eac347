"""Rules, their immutable versions, and the detector registry."""

from django.apps import AppConfig


class RulesConfig(AppConfig):
    name = "evals.rules"
    label = "rules"
    verbose_name = "Rules"

    def ready(self):
        from core.import_kinds import import_kind_register
        from evals.rules.importing import RULES_KIND

        import_kind_register(RULES_KIND)
