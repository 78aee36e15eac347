"""Reads behind the API: one transcript with its turns, rules with their versions (filtered lists
of calls and verdicts are evals.selectors.browse's, shared with the pages)."""

from django.db.models import Prefetch, QuerySet

from evals.models import Rule, RuleVersion, Transcript, Turn


def transcript_with_turns() -> QuerySet[Transcript]:
    """Return transcripts with their turns prefetched in order (for one transcript's detail)."""
    return Transcript.objects.select_related("agent_version__agent").prefetch_related(
        Prefetch("turns", queryset=Turn.objects.order_by("index"))
    )


def rules_with_versions() -> QuerySet[Rule]:
    """Return rules with every version prefetched, oldest version first."""
    return Rule.objects.order_by("group", "rule_id").prefetch_related(
        Prefetch("versions", queryset=RuleVersion.objects.order_by("number"))
    )
