"""Recompute the verdict tally (calibration's per-verdict counts) from the marks: a repair tool."""

from core.management.rebuild import RebuildCommand
from labeling.services.tally import (
    tally_triggers_install,
    verdict_tally_differences,
    verdict_tally_rebuild,
)


class Command(RebuildCommand):
    help = (
        "Recompute the verdict tally from the marks (and "
        "reinstall its triggers); --check only counts drift."
    )
    what = "verdict tally"
    differ = "verdicts or cells differ from a fresh recount"
    rebuilt = "marked verdicts"
    differences = staticmethod(verdict_tally_differences)
    install = staticmethod(tally_triggers_install)
    rebuild = staticmethod(verdict_tally_rebuild)
