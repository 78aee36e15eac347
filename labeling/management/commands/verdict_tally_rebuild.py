"""Recompute the verdict tally (calibration's per-verdict counts) from the marks: a repair tool."""

import time

from django.core.management.base import BaseCommand

from labeling.services.tally import (
    tally_triggers_install,
    verdict_tally_differences,
    verdict_tally_rebuild,
)


class Command(BaseCommand):
    help = (
        "Recompute the verdict tally from the marks (and "
        "reinstall its triggers); --check only counts drift."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Only report how many verdicts differ."
        )

    def handle(self, *args, check=False, **options):
        if check:
            n = verdict_tally_differences()
            self.stdout.write(f"verdict tally: {n} verdicts differ from a fresh recount")
            if n:
                raise SystemExit(1)
            return
        started = time.perf_counter()
        tally_triggers_install()
        n = verdict_tally_rebuild()
        self.stdout.write(
            f"verdict tally rebuilt: {n} marked verdicts in {time.perf_counter() - started:.1f} s"
        )
