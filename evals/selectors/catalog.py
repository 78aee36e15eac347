"""Reads behind the API: one transcript with its turns, rules with their versions (filtered lists
of calls and verdicts are evals.selectors.browse's, shared with the pages)."""

from django.db.models import BooleanField, Count, ExpressionWrapper, Prefetch, Q, QuerySet

from evals.models import AgentVersion, Rule, RuleVersion, Transcript, Turn


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


def agent_versions_listed() -> QuerySet[AgentVersion]:
    """Return every agent version with its agent and call count, newest version first per agent."""
    return (
        AgentVersion.objects.select_related("agent")
        .defer("instructions", "tools")
        .annotate(
            calls=Count("transcripts"),
            has_instructions=ExpressionWrapper(~Q(instructions=""), output_field=BooleanField()),
        )
        .order_by("agent__name", "-version")
    )


def agent_version_found(agent: str, version: str) -> AgentVersion | None:
    """Return one agent version with its scope and call count, or None."""
    return (
        AgentVersion.objects.select_related("agent")
        .annotate(calls=Count("transcripts"))
        .filter(agent__name=agent, version=version)
        .first()
    )
