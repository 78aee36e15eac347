"""Agents, agent versions, transcripts and turns; the one agent-version resolver."""

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "evals.catalog"
    label = "catalog"
    verbose_name = "Catalog"
