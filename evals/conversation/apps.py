"""The conversation judge: whole calls scored against their plan."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _figures_triggers(sender, using, **kwargs):
    """After every migrate, put the conversation figures' triggers back (SQLite drops them when
    it rebuilds a table), and count the scores of a database whose scores came before them."""
    from django.db import connections

    from evals.conversation.figures import (
        conversation_figures_rebuild_if_empty,
        figures_triggers_install,
    )

    connection = connections[using]
    if connection.vendor in ("postgresql", "sqlite") and figures_triggers_install(
        connection=connection
    ):
        conversation_figures_rebuild_if_empty(connection=connection)


class ConversationConfig(AppConfig):
    name = "evals.conversation"
    label = "conversation"
    verbose_name = "Conversation"

    def ready(self):
        from core.data_versions import data_kind_register
        from evals.conversation import gate_metrics, prompt, selectors, services
        from evals.conversation.models import ConversationScore

        data_kind_register("conversation_scores", ConversationScore._meta.db_table)
        from evals.gating.decision import metric_kind_register
        from evals.gating.registry import GateSource, gate_source_register
        from evals.judging import registry

        registry.item_kind_register(
            registry.ItemKind(
                name=services.ITEM_KIND,
                run=services.conversation_item_run,
                rule_groups=(prompt.GROUP,),
                store=services.conversation_score_put,
            )
        )
        registry.call_section_register(selectors.conversation_call_section)
        metric_kind_register(gate_metrics.KIND)
        # The gate takes the conversation checks' verdicts from the conversation judge, and has
        # it score the golden calls it has not (whole, on replay).
        gate_source_register(
            GateSource(
                name=gate_metrics.LAYER,
                kinds=(gate_metrics.CONVERSATION_SCORE,),
                rule_groups=(prompt.GROUP,),
                judge=selectors.conversation_judge_for,
                start_missing=services.conversation_missing_start,
                call_facts=selectors.conversation_facts,
            )
        )
        post_migrate.connect(
            _figures_triggers, sender=self, dispatch_uid="conversation-figures-triggers"
        )
