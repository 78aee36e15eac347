"""Recompute the classifier spans (the thresholds pages' counts) from the verdicts: repair tool."""

import time

from django.core.management.base import BaseCommand, CommandError

from labeling.services.classifier_spans import (
    classifier_spans_differences,
    classifier_spans_rebuild,
    classifier_spans_triggers_install,
    spans_kept,
)


class Command(BaseCommand):
    help = (
        "Recompute the classifier spans from the verdicts (and reinstall their triggers); "
        "--check only counts drift."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="Only report how many differ.")

    def handle(self, *args, check=False, **options):
        if not spans_kept():
            raise CommandError("classifier spans are kept on PostgreSQL only")
        if check:
            n = classifier_spans_differences()
            self.stdout.write(f"classifier spans: {n} rows differ from a fresh recount")
            if n:
                raise SystemExit(1)
            return
        started = time.perf_counter()
        classifier_spans_triggers_install()
        n = classifier_spans_rebuild()
        self.stdout.write(
            f"classifier spans rebuilt: {n} rows in {time.perf_counter() - started:.1f} s"
        )
