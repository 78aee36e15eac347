"""Reads of the conversation judge's scores: per call, per judge run, per agent version."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.db.models import Avg, Count, F, Q, QuerySet, Sum

from core.data_versions import figures_cached
from core.stats import WeightedSums, weighted_mean_of_sums
from evals.catalog.models import AgentVersion, Transcript
from evals.conversation.gate_metrics import ConversationFact
from evals.conversation.models import ConversationScore
from evals.conversation.prompt import PROMPT_VERSION as CONVERSATION_PROMPT
from evals.judging.models import Judge, JudgeRun


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


def conversation_call_section(request, transcript: Transcript) -> str:
    """The call page's conversation panel (registered with judging), or "" when unscored."""
    from django.template.loader import render_to_string

    scores = conversation_scores_for_transcript(transcript)
    if not scores:
        return ""
    return render_to_string(
        "conversation/partials/conversation.html",
        {"scores": scores, "t": transcript},
        request=request,
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


def _finding_counts(version_id: int | None) -> dict[tuple[int, int], dict[str, int]]:
    """(agent version, judge) -> findings by type over the non-errored scores, counted in SQL."""
    table = ConversationScore._meta.db_table
    if connection.vendor == "postgresql":
        elements, kind = "jsonb_array_elements(s.findings) f", "f ->> 'type'"
    else:
        elements, kind = "json_each(s.findings) f", "json_extract(f.value, '$.type')"
    where, params = "", []
    if version_id is not None:
        where, params = "AND t.agent_version_id = %s", [version_id]
    sql = f"""
SELECT t.agent_version_id, s.judge_id, COALESCE({kind}, '?'), COUNT(*)
FROM {table} s JOIN {Transcript._meta.db_table} t ON t.id = s.transcript_id, {elements}
WHERE s.error = '' {where}
GROUP BY 1, 2, 3"""
    out: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for av, judge, finding, n in cursor.fetchall():
            out[(av, judge)][finding] = n
    return out


def conversation_versions(version_id: int | None = None) -> list[VersionRow]:
    """Per (agent version, conversation judge): calls scored, mean score with its 95% interval,
    calls with findings and the findings by type. Errored scores are counted apart. Every figure
    is summed in SQL (scores are whole numbers, so their sums are exact): two queries in all,
    over every score (0.45 s at 50,000 scored calls), so kept while no call and no conversation
    score changed (core.data_versions). With `version_id`, that agent version's rows only."""
    return figures_cached(
        f"conversation-versions:{version_id}",
        lambda: _conversation_versions(version_id),
        reads=("calls", "conversation_scores"),
    )


def _conversation_versions(version_id: int | None) -> list[VersionRow]:
    ok = Q(error="")
    qs = ConversationScore.objects.all()
    if version_id is not None:
        qs = qs.filter(transcript__agent_version_id=version_id)
    groups = (
        qs.values(
            "transcript__agent_version",
            "transcript__agent_version__version",
            "transcript__agent_version__agent__name",
            "judge",
            "judge__name",
        )
        .annotate(
            calls=Count("pk", filter=ok),
            errored=Count("pk", filter=~ok),
            n=Count("score", filter=ok),
            sx=Sum("score", filter=ok),
            sxx=Sum(F("score") * F("score"), filter=ok),
            flagged_calls=Count("pk", filter=ok & ~Q(findings=[]) & Q(findings__isnull=False)),
        )
        .order_by("transcript__agent_version__agent__name", "-transcript__agent_version__version")
    )
    counts = _finding_counts(version_id)
    rows = []
    for g in groups:
        n, sx, sxx = g["n"], float(g["sx"] or 0), float(g["sxx"] or 0)
        mean = weighted_mean_of_sums(WeightedSums(n, float(n), sx, float(n), sx, sxx))
        rows.append(
            VersionRow(
                agent=g["transcript__agent_version__agent__name"],
                version=g["transcript__agent_version__version"],
                version_id=g["transcript__agent_version"],
                judge=g["judge__name"],
                judge_id=g["judge"],
                calls=g["calls"],
                errored=g["errored"],
                mean=sx / n if n else None,
                interval=mean.ci if n >= 2 else None,
                flagged_calls=g["flagged_calls"],
                finding_counts=dict(
                    sorted(counts.get((g["transcript__agent_version"], g["judge"]), {}).items())
                ),
            )
        )
    return rows


def conversation_version_calls(version: AgentVersion, judge_id: int | None = None) -> QuerySet:
    """One agent version's scored calls, lowest score first (errored last), then in the order the
    calls came: page it. That is the order of the index conversation_score_order, so a page walks
    it and stops, where sorting every score of the version first grew with them."""
    qs = ConversationScore.objects.filter(transcript__agent_version=version)
    if judge_id:
        qs = qs.filter(judge_id=judge_id)
    return qs.select_related("transcript", "judge").order_by(
        "error", "score", "transcript_id", "judge_id"
    )


def conversation_scored_calls(rows: Iterable[VersionRow], judge_id: int | None = None) -> int:
    """How many scores (errored ones too) `conversation_version_calls` lists, from the version's
    figures (no count of the scores again)."""
    return sum(r.calls + r.errored for r in rows if not judge_id or r.judge_id == judge_id)


def conversation_version_mean(version: AgentVersion, judge_id: int) -> float | None:
    return ConversationScore.objects.filter(
        transcript__agent_version=version, judge_id=judge_id, error=""
    ).aggregate(m=Avg("score"))["m"]


# ---- for gates --------------------------------------------------------------------------------


def conversation_judge_for(transcripts: Iterable[Transcript]) -> Judge | None:
    """The conversation judge whose scores a gate counts: the configured model's, else the
    conversation judge with the most scores on these calls (e.g. one whose results were loaded)."""
    ids = [t.pk for t in transcripts]
    current = Judge.objects.filter(name=f"{settings.JUDGE_MODEL}/{CONVERSATION_PROMPT}").first()
    if current and ConversationScore.objects.filter(judge=current, transcript__in=ids).exists():
        return current
    other = (
        Judge.objects.filter(prompt_version__startswith="conversation-")
        .annotate(n=Count("conversation_scores", filter=Q(conversation_scores__transcript__in=ids)))
        .filter(n__gt=0)
        .order_by("-n", "name")
        .first()
    )
    return other or current


def conversation_facts(
    transcript_ids: Sequence[int], judge: Judge | None
) -> dict[int, ConversationFact]:
    """transcript pk -> the conversation judge's score of it."""
    if judge is None:
        return {}
    rows = ConversationScore.objects.filter(transcript__in=list(transcript_ids), judge=judge)
    return {
        tid: ConversationFact(score=score, error=error, findings=tuple(findings or ()))
        for tid, score, error, findings in rows.values_list(
            "transcript_id", "score", "error", "findings"
        )
    }
