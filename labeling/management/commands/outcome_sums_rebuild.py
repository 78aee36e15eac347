"""Recompute the outcome check sums (what predicts the outcome) from the sources: a repair tool."""

from core.management.rebuild import RebuildCommand
from labeling.services.outcome_sums import (
    outcome_sums_differences,
    outcome_sums_rebuild,
    outcome_triggers_install,
)


class Command(RebuildCommand):
    help = (
        "Recompute the outcome check sums from the ratings, verdicts and conversation scores "
        "(and reinstall their triggers); --check only counts drift."
    )
    what = "outcome sums"
    differ = "rows differ from a full recompute"
    rebuilt = "check rows"
    differences = staticmethod(outcome_sums_differences)
    install = staticmethod(outcome_triggers_install)
    rebuild = staticmethod(outcome_sums_rebuild)
