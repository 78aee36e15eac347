"""The one shape of the rebuild commands of figures database triggers keep (the verdict tally,
outcome sums, classifier spans, decision cells, verdict counts, conversation figures, sample item
counts): `--check` counts what differs from a full recompute and exits 1 on any; without it the
triggers are reinstalled and everything recomputed."""

import time
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError


class RebuildCommand(BaseCommand):
    what = ""  # "verdict tally"
    differ = ""  # what --check counts: "verdicts differ from a fresh recount"
    rebuilt = ""  # what the rebuild counts: "marked verdicts"
    differences: Callable[[], int]
    install: Callable[[], object]
    rebuild: Callable[[], int]
    available: Callable[[], bool] | None = None  # False: the figures are not kept here
    unavailable = ""

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Only report how many differ (exit 1 if any)."
        )

    def handle(self, *args, check=False, **options):
        if self.available is not None and not self.available():
            raise CommandError(self.unavailable)
        if check:
            n = self.differences()
            self.stdout.write(f"{self.what}: {n} {self.differ}")
            if n:
                raise SystemExit(1)
            return
        started = time.perf_counter()
        self.install()
        n = self.rebuild()
        self.stdout.write(
            f"{self.what} rebuilt: {n} {self.rebuilt} in {time.perf_counter() - started:.1f} s"
        )
