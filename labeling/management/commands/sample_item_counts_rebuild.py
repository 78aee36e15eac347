"""Recompute the sample item counts (the samples list's figures) from the sample items: a repair
tool; --check only counts drift."""

from core.management.rebuild import RebuildCommand
from labeling.services.sample_counts import (
    sample_item_counts_differences,
    sample_item_counts_rebuild,
    sample_item_counts_triggers_install,
)


class Command(RebuildCommand):
    help = (
        "Recompute the sample item counts from the sample items (and reinstall their triggers); "
        "--check only counts drift."
    )
    what = "sample item counts"
    differ = "sample counts differ from a full recount"
    rebuilt = "samples"
    differences = staticmethod(sample_item_counts_differences)
    install = staticmethod(sample_item_counts_triggers_install)
    rebuild = staticmethod(sample_item_counts_rebuild)
