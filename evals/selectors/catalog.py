"""Reads behind the API: transcripts with their turns,
rules with their versions, filtered verdicts."""

from django.db.models import Prefetch, QuerySet

from evals.models import Rule, RuleVersion, Transcript, Turn, Verdict


def transcripts_list(
    *, agent: str = "", agent_version: str = "", scenario: str = ""
) -> QuerySet[Transcript]:
    """Return transcripts (newest first) with their agent version, optionally filtered."""
    qs = Transcript.objects.select_related("agent_version__agent").order_by("-imported_at", "-pk")
    if agent:
        qs = qs.filter(agent_version__agent__name=agent)
    if agent_version:
        qs = qs.filter(agent_version__version=agent_version)
    if scenario:
        qs = qs.filter(scenario=scenario)
    return qs


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


def verdicts_filtered(
    *,
    rule: str = "",
    version: int | None = None,
    judge: str = "",
    transcript: str = "",
    flagged: bool | None = None,
) -> QuerySet[Verdict]:
    """Return verdicts with their transcript, rule version and judge, filtered as asked."""
    qs = Verdict.objects.select_related("transcript", "rule_version__rule", "judge")
    if rule:
        qs = qs.filter(rule_version__rule__rule_id=rule)
    if version is not None:
        qs = qs.filter(rule_version__number=version)
    if judge:
        qs = qs.filter(judge__name=judge)
    if transcript:
        qs = qs.filter(transcript__external_id=transcript)
    if flagged is not None:
        qs = qs.filter(flagged=flagged)
    return qs
