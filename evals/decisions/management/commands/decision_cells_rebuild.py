"""Recompute the decision cells (the decision accuracy figures) from the decisions: a repair
tool; --check only counts drift."""

from core.management.rebuild import RebuildCommand
from evals.decisions.services.cells import (
    cells_triggers_install,
    decision_cells_differences,
    decision_cells_rebuild,
)


class Command(RebuildCommand):
    help = (
        "Recompute the decision cells from the decisions (and reinstall their triggers); "
        "--check only counts drift."
    )
    what = "decision cells"
    differ = "cells differ from a full recount"
    rebuilt = "cells"
    differences = staticmethod(decision_cells_differences)
    install = staticmethod(cells_triggers_install)
    rebuild = staticmethod(decision_cells_rebuild)
