"""Recompute the decision cells (the decision accuracy figures) from the decisions: a repair
tool; --check only counts drift."""

import time

from django.core.management.base import BaseCommand

from evals.decisions.services.cells import (
    cells_triggers_install,
    decision_cells_differences,
    decision_cells_rebuild,
)


class Command(BaseCommand):
    help = (
        "Recompute the decision cells from the decisions (and reinstall their triggers); "
        "--check only counts drift."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Only report how many cells differ."
        )

    def handle(self, *args, check=False, **options):
        if check:
            n = decision_cells_differences()
            self.stdout.write(f"decision cells: {n} cells differ from a full recount")
            if n:
                raise SystemExit(1)
            return
        started = time.perf_counter()
        cells_triggers_install()
        n = decision_cells_rebuild()
        self.stdout.write(
            f"decision cells rebuilt: {n} cells in {time.perf_counter() - started:.1f} s"
        )
