from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _tally_triggers(sender, using, **kwargs):
    """After every migrate, put the verdict tally's triggers back (SQLite drops them when it
    rebuilds a table), and count the marks of a database whose marks came before the tally."""
    from django.db import connections

    from labeling.services.tally import tally_triggers_install, verdict_tally_rebuild_if_empty
    from labeling.services.tally_cells import TALLY_CELLS

    connection = connections[using]
    if (
        connection.vendor in ("postgresql", "sqlite")
        and tally_triggers_install(connection=connection)
        and verdict_tally_rebuild_if_empty(connection=connection) is None
    ):
        TALLY_CELLS.rebuild_if_empty(connection=connection)
    from labeling.services.classifier_spans import classifier_spans_triggers_install

    classifier_spans_triggers_install(connection=connection)


def _outcome_triggers(sender, using, **kwargs):
    """After every migrate, put the outcome sums' triggers back, and compute the sums of a
    database whose ratings came before them."""
    from django.db import connections

    from labeling.services.outcome_sums import (
        outcome_sums_rebuild_if_empty,
        outcome_triggers_install,
    )

    connection = connections[using]
    if connection.vendor in ("postgresql", "sqlite") and outcome_triggers_install(
        connection=connection
    ):
        outcome_sums_rebuild_if_empty(connection=connection)


class LabelingConfig(AppConfig):
    name = "labeling"
    verbose_name = "Labeling"

    def ready(self):
        from core.import_kinds import import_kind_register
        from evals.webhooks.events import webhook_event_register
        from labeling.services.marks_import import MARKS_KIND

        import_kind_register(MARKS_KIND)

        from core.data_versions import data_kind_register
        from labeling.models import OutcomeRating, SampleItem

        data_kind_register("ratings", OutcomeRating._meta.db_table)
        data_kind_register("samples", SampleItem._meta.db_table)

        webhook_event_register("rule_version.promoted", "a lead promoted a rule version")
        webhook_event_register("rule_version.demoted", "a lead demoted a rule version")
        post_migrate.connect(_tally_triggers, sender=self, dispatch_uid="labeling-tally-triggers")
        post_migrate.connect(
            _outcome_triggers, sender=self, dispatch_uid="labeling-outcome-triggers"
        )
        from labeling.services.sample_counts import SAMPLE_ITEM_COUNTS

        # After every migrate: the counts' triggers back, the items counted if need be.
        post_migrate.connect(
            SAMPLE_ITEM_COUNTS.after_migrate,
            sender=self,
            weak=False,
            dispatch_uid="sample-item-counts-triggers",
        )
