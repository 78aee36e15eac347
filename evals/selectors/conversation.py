"""Reads of the conversation judge's scores: per call, per judge run, per agent version."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Avg, Count, Q

from evals.gates import mean_interval
from evals.models import AgentVersion, ConversationScore, JudgeRun, Transcript


def finding_label(f: dict) -> str:
    """`repeated_ground@4,9`: a finding's type and the turns it cites."""
    turns = ",".join(str(t) for t in f.get("turns") or [])
    return f"{f.get('type', '?')}{'@' + turns if turns else ''}"


def conversation_scores_for_run(run: JudgeRun) -> list[ConversationScore]:
    return list(
        ConversationScore.objects.filter(judge_run=run)
        .select_related("transcript")
        .order_by("transcript__external_id")
    )


def conversation_scores_for_transcript(transcript: Transcript) -> list[ConversationScore]:
    """Every conversation judge's reading of one call, the newest judge first."""
    return list(
        ConversationScore.objects.filter(transcript=transcript)
        .select_related("judge", "judge_run")
        .order_by("-judge__created_at", "-pk")
    )


@dataclass
class VersionRow:
    """One agent version's conversation figures under one conversation judge."""

    agent: str
    version: str
    version_id: int
    judge: str
    judge_id: int
    calls: int
    errored: int
    mean: float | None
    interval: tuple[float, float] | None
    flagged_calls: int
    finding_counts: dict[str, int] = field(default_factory=dict)


def conversation_versions() -> list[VersionRow]:
    """Per (agent version, conversation judge): calls scored, mean score with its 95% interval,
    calls with findings and the findings by type. Errored scores are counted apart."""
    groups = (
        ConversationScore.objects.values(
            "transcript__agent_version",
            "transcript__agent_version__version",
            "transcript__agent_version__agent__name",
            "judge",
            "judge__name",
        )
        .annotate(calls=Count("pk", filter=Q(error="")), errored=Count("pk", filter=~Q(error="")))
        .order_by("transcript__agent_version__agent__name", "-transcript__agent_version__version")
    )
    rows = []
    for g in groups:
        scores = list(
            ConversationScore.objects.filter(
                transcript__agent_version=g["transcript__agent_version"],
                judge=g["judge"],
                error="",
            ).values_list("score", "findings")
        )
        counts: dict[str, int] = {}
        for _, findings in scores:
            for f in findings:
                counts[f.get("type", "?")] = counts.get(f.get("type", "?"), 0) + 1
        values = [float(s) for s, _ in scores if s is not None]
        rows.append(
            VersionRow(
                agent=g["transcript__agent_version__agent__name"],
                version=g["transcript__agent_version__version"],
                version_id=g["transcript__agent_version"],
                judge=g["judge__name"],
                judge_id=g["judge"],
                calls=g["calls"],
                errored=g["errored"],
                mean=sum(values) / len(values) if values else None,
                interval=mean_interval(values),
                flagged_calls=sum(1 for _, f in scores if f),
                finding_counts=dict(sorted(counts.items())),
            )
        )
    return rows


def conversation_version_calls(version: AgentVersion, judge_id: int | None = None):
    """One agent version's scored calls, lowest score first (errored last)."""
    qs = ConversationScore.objects.filter(transcript__agent_version=version)
    if judge_id:
        qs = qs.filter(judge_id=judge_id)
    return list(
        qs.select_related("transcript", "judge").order_by(
            "judge__name", "error", "score", "transcript__external_id"
        )
    )


def conversation_version_mean(version: AgentVersion, judge_id: int) -> float | None:
    return ConversationScore.objects.filter(
        transcript__agent_version=version, judge_id=judge_id, error=""
    ).aggregate(m=Avg("score"))["m"]
