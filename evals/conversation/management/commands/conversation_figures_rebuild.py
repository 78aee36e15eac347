"""Recompute the conversation figures (per agent version and conversation judge) from the
scores: a repair tool; --check only counts drift."""

from core.management.rebuild import RebuildCommand
from evals.conversation.figures import (
    conversation_figures_differences,
    conversation_figures_rebuild,
    figures_triggers_install,
)


class Command(RebuildCommand):
    help = (
        "Recompute the conversation figures from the scores (and reinstall their triggers); "
        "--check only counts drift."
    )
    what = "conversation figures"
    differ = "agent version and judge pairs differ from a full recount"
    rebuilt = "agent version and judge pairs"
    differences = staticmethod(conversation_figures_differences)
    install = staticmethod(figures_triggers_install)
    rebuild = staticmethod(conversation_figures_rebuild)
