"""Decision kinds and the agent's decisions at real moments."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class DecisionsConfig(AppConfig):
    name = "evals.decisions"
    label = "decisions"
    verbose_name = "Decisions"

    def ready(self):
        from dataclasses import replace

        from core.import_kinds import import_kind_register
        from evals.catalog.registry import CallPart, call_part_register
        from evals.decisions import gate_metrics, selectors
        from evals.decisions.services import importing
        from evals.decisions.services.kinds import DECISION_KINDS_KIND
        from evals.gating.decision import metric_kind_register
        from evals.gating.registry import GateSource, gate_source_register

        import_kind_register(DECISION_KINDS_KIND)
        call_part_register(
            CallPart(
                name="decisions",
                parser=importing.decisions_parser,
                write=importing.decisions_write,
                forget=importing.decisions_forget,
                keys=("decisions",),
            )
        )
        for kind in gate_metrics.KINDS:
            metric_kind_register(replace(kind, names=selectors.decision_kind_names))
        gate_source_register(
            GateSource(
                name=gate_metrics.LAYER,
                kinds=tuple(k.name for k in gate_metrics.KINDS),
                call_facts=selectors.decision_facts,
            )
        )
        from evals.decisions.services.cells import DECISION_CELLS

        # After every migrate: the cells' triggers back, the decisions counted if need be.
        post_migrate.connect(
            DECISION_CELLS.after_migrate,
            sender=self,
            weak=False,
            dispatch_uid="decision-cells-triggers",
        )
