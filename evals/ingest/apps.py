"""Traces pushed in: voice platforms' end-of-call webhooks and OpenTelemetry (OTLP/HTTP) spans,
each handed to the one transcript importer."""

from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "evals.ingest"
    label = "ingest"
    verbose_name = "Ingest"
