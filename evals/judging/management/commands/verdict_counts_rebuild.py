"""Recompute the verdict counts (the dashboard's, rules list's and rule page's figures) from the
verdicts: a repair tool; --check only counts drift."""

from core.management.rebuild import RebuildCommand
from evals.judging.services.counts import (
    counts_triggers_install,
    verdict_counts_differences,
    verdict_counts_rebuild,
)


class Command(RebuildCommand):
    help = (
        "Recompute the verdict counts from the verdicts (and reinstall their triggers); "
        "--check only counts drift."
    )
    what = "verdict counts"
    differ = "counts differ from a full recount"
    rebuilt = "counts"
    differences = staticmethod(verdict_counts_differences)
    install = staticmethod(counts_triggers_install)
    rebuild = staticmethod(verdict_counts_rebuild)
