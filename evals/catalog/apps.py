"""Agents, agent versions, transcripts and turns; the one agent-version resolver."""

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "evals.catalog"
    label = "catalog"
    verbose_name = "Catalog"

    def ready(self):
        from core.import_kinds import import_kind_register
        from evals.catalog.services.importing import TRANSCRIPTS_KIND

        import_kind_register(TRANSCRIPTS_KIND)

        from core.data_versions import data_kind_register
        from evals.catalog.models import Transcript

        data_kind_register("calls", Transcript._meta.db_table)
