"""Recompute the outcome check sums (what predicts the outcome) from the sources: a repair tool."""

import time

from django.core.management.base import BaseCommand

from labeling.services.outcome_sums import (
    outcome_sums_differences,
    outcome_sums_rebuild,
    outcome_triggers_install,
)


class Command(BaseCommand):
    help = (
        "Recompute the outcome check sums from the ratings, verdicts and conversation scores "
        "(and reinstall their triggers); --check only counts drift."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Only report how many rows differ."
        )

    def handle(self, *args, check=False, **options):
        if check:
            n = outcome_sums_differences()
            self.stdout.write(f"outcome sums: {n} rows differ from a full recompute")
            if n:
                raise SystemExit(1)
            return
        started = time.perf_counter()
        outcome_triggers_install()
        n = outcome_sums_rebuild()
        self.stdout.write(
            f"outcome sums rebuilt: {n} check rows in {time.perf_counter() - started:.1f} s"
        )
