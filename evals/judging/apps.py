"""Judges, judge runs, the judge client and prompts, the cache, verdicts."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class JudgingConfig(AppConfig):
    name = "evals.judging"
    label = "judging"
    verbose_name = "Judging"

    def ready(self):
        from core.import_kinds import import_kind_register
        from evals.catalog.registry import CallPart, call_part_register
        from evals.judging import tasks  # noqa: F401 (registers the Celery tasks)
        from evals.judging.services.importing import VERDICTS_KIND, verdicts_forget

        import_kind_register(VERDICTS_KIND)

        from core.data_versions import data_kind_register
        from evals.judging.models import Verdict

        data_kind_register("verdicts", Verdict._meta.db_table)

        from core.bulk_keys import bulk_key_register

        for field in ("transcript", "rule_version", "judge"):
            bulk_key_register(Verdict, field)

        # A call whose turns a replace changed loses the verdicts (and marks) made on them.
        call_part_register(
            CallPart(
                name="verdicts",
                forget=verdicts_forget,
                counts=("deleted_verdicts", "deleted_marks", "cancelled_checks"),
            )
        )
        from evals.judging.services.counts import VERDICT_COUNTS

        # After every migrate: the counts' triggers back, the verdicts counted if need be.
        post_migrate.connect(
            VERDICT_COUNTS.after_migrate,
            sender=self,
            weak=False,
            dispatch_uid="verdict-counts-triggers",
        )
