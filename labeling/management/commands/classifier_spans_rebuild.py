"""Recompute the classifier spans (the thresholds pages' counts) from the verdicts: repair tool."""

from core.management.rebuild import RebuildCommand
from labeling.services.classifier_spans import (
    classifier_spans_differences,
    classifier_spans_rebuild,
    classifier_spans_triggers_install,
    spans_kept,
)


class Command(RebuildCommand):
    help = (
        "Recompute the classifier spans from the verdicts (and reinstall their triggers); "
        "--check only counts drift."
    )
    what = "classifier spans"
    differ = "rows differ from a fresh recount"
    rebuilt = "rows"
    differences = staticmethod(classifier_spans_differences)
    install = staticmethod(classifier_spans_triggers_install)
    rebuild = staticmethod(classifier_spans_rebuild)
    available = staticmethod(spans_kept)
    unavailable = "classifier spans are kept on PostgreSQL only"
