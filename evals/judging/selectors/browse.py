"""Reads behind the browsing pages: calls, the call page, rules, rule versions and verdicts.

Lists page by offset with one extra row to know whether a next page exists, so a page never
needs a COUNT over a join; per-row figures are aggregated for the page's rows only.
"""

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Exists, F, Max, Min, OuterRef, Q, QuerySet
from django.utils import timezone

from core import parsing
from core.data_versions import figures_cached
from evals.catalog.models import AgentVersion, Transcript, Turn
from evals.catalog.selectors import agent_version_resolve
from evals.judging.models import Judge, Verdict
from evals.judging.selectors.counts import verdict_counts
from evals.rules.models import Rule, RuleVersion

PER_PAGE = 50
LOW_ASR_CONFIDENCE = 0.75
OK = Q(error="")


@dataclass
class Page:
    """One page of a list: its rows, its number, and whether neighbours exist."""

    rows: list
    number: int
    per_page: int
    has_next: bool
    total: int | None = None

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def first_index(self) -> int:
        return (self.number - 1) * self.per_page + 1 if self.rows else 0

    @property
    def last_index(self) -> int:
        return (self.number - 1) * self.per_page + len(self.rows)


def page_of(qs: QuerySet, *, page: int, per_page: int = PER_PAGE) -> Page:
    """Return page `page` (1-based) of `qs`, fetching
    one row more than needed to detect a next page."""
    page = max(1, page)
    start = (page - 1) * per_page
    rows = list(qs[start : start + per_page + 1])
    return Page(rows=rows[:per_page], number=page, per_page=per_page, has_next=len(rows) > per_page)


# Calls ---------------------------------------------------------------------------------------


@dataclass
class CallFilters:
    q: str = ""
    agent: str = ""
    agent_version: str = ""  # VERSION, or AGENT:VERSION
    scenario: str = ""
    tenant: str = ""
    language: str = ""
    has_audio: bool | None = None
    started_from: date | None = None
    started_to: date | None = None
    flagged_rule: str = ""


def day_start(day: date) -> datetime:
    """Return the aware datetime at which `day` begins in the
    current time zone (the one copy: labeling uses it)."""
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


def transcript_filtered(filters: CallFilters) -> QuerySet[Transcript]:
    """Return transcripts matching the filters, newest first (calls without a start time last).

    The one read of filtered calls: the calls page, the API and any command use it.
    """
    qs = Transcript.objects.all()
    if filters.q:
        qs = qs.filter(external_id__icontains=filters.q.strip())
    if filters.agent_version:
        av = agent_version_resolve(filters.agent_version, agent=filters.agent)
        qs = qs.filter(agent_version=av)
    elif filters.agent:
        qs = qs.filter(agent_version__agent__name=filters.agent)
    if filters.scenario:
        qs = qs.filter(scenario=filters.scenario)
    if filters.tenant:
        qs = qs.filter(tenant=filters.tenant)
    if filters.language:
        qs = qs.filter(language=filters.language)
    if filters.has_audio is True:
        qs = qs.exclude(audio_url="")
    elif filters.has_audio is False:
        qs = qs.filter(audio_url="")
    if filters.started_from:
        qs = qs.filter(started_at__gte=day_start(filters.started_from))
    if filters.started_to:
        qs = qs.filter(started_at__lt=day_start(filters.started_to + timedelta(days=1)))
    if filters.flagged_rule:
        # Resolving the versions first lets PostgreSQL probe the verdict key index per call.
        version_ids = list(
            RuleVersion.objects.filter(rule__rule_id=filters.flagged_rule).values_list(
                "pk", flat=True
            )
        )
        flagged = Verdict.objects.filter(
            OK, transcript=OuterRef("pk"), flagged=True, rule_version_id__in=version_ids
        )
        qs = qs.filter(Exists(flagged)) if version_ids else qs.none()
    return qs.order_by(F("started_at").desc(nulls_last=True), "-id")


@dataclass
class CallRow:
    transcript: Transcript
    turns: int = 0
    duration_ms: int | None = None
    verdicts: int = 0
    flagged: int = 0
    errored: int = 0


def transcript_list_page(filters: CallFilters, *, page: int, per_page: int = PER_PAGE) -> Page:
    """Return a page of CallRows with turn, duration and verdict figures for just those calls."""
    qs = transcript_filtered(filters).select_related("agent_version__agent")
    result = page_of(qs, page=page, per_page=per_page)
    ids = [t.pk for t in result.rows]
    turn_figs = {
        r["transcript_id"]: r
        for r in Turn.objects.filter(transcript_id__in=ids)
        .values("transcript_id")
        .annotate(n=Count("id"), first=Min("start_ms"), last=Max("end_ms"))
        .order_by()
    }
    verdict_figs = {
        r["transcript_id"]: r
        for r in Verdict.objects.filter(transcript_id__in=ids)
        .values("transcript_id")
        .annotate(
            n=Count("id"),
            flagged=Count("id", filter=Q(OK, flagged=True)),
            errored=Count("id", filter=~OK),
        )
        .order_by()
    }
    rows = []
    for t in result.rows:
        tf = turn_figs.get(t.pk, {})
        vf = verdict_figs.get(t.pk, {})
        duration = None
        if tf.get("last") is not None:
            duration = tf["last"] - (tf.get("first") or 0)
        rows.append(
            CallRow(
                transcript=t,
                turns=tf.get("n", 0),
                duration_ms=duration,
                verdicts=vf.get("n", 0),
                flagged=vf.get("flagged", 0),
                errored=vf.get("errored", 0),
            )
        )
    result.rows = rows
    if result.has_next or result.number > 1:
        key = "call-count:" + hashlib.sha256(repr(filters).encode()).hexdigest()[:24]
        result.total = figures_cached(key, lambda: transcript_filtered(filters).order_by().count())
    else:
        result.total = len(rows)
    return result


def transcript_filter_choices() -> dict[str, list]:
    """Return the options for the calls list's filters:
    agent versions, scenarios, languages, rules."""

    def distinct_values():
        return {
            "scenarios": list(
                Transcript.objects.exclude(scenario="")
                .order_by("scenario")
                .values_list("scenario", flat=True)
                .distinct()[:500]
            ),
            "languages": list(
                Transcript.objects.exclude(language="")
                .order_by("language")
                .values_list("language", flat=True)
                .distinct()[:100]
            ),
            "tenants": list(
                Transcript.objects.exclude(tenant="")
                .order_by("tenant")
                .values_list("tenant", flat=True)
                .distinct()[:500]
            ),
        }

    return {
        "agent_versions": list(
            AgentVersion.objects.select_related("agent")
            .defer("instructions", "tools")
            .order_by("agent__name", "-version")
        ),
        **figures_cached("call-filter-values", distinct_values, reads=("calls",)),
        "rules": list(Rule.objects.order_by("rule_id").values_list("rule_id", flat=True)),
    }


# The call page ---------------------------------------------------------------------------------


@dataclass
class ToolCall:
    name: str
    call_id: str
    arguments: str  # pretty-printed JSON, or the raw text when it is not JSON


@dataclass
class TurnView:
    turn: Turn
    phase_changed: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    result_json: str | None = None  # a tool turn whose text is JSON, pretty-printed
    tool_name: str = ""
    low_confidence: bool = False
    verdicts: list = field(default_factory=list)  # verdicts whose first cited turn is this one
    also_cited_by: list = field(default_factory=list)  # verdicts citing this turn after their first


def pretty_json(value: Any) -> str | None:
    """Return `value` as indented JSON; a string holding
    JSON is parsed first. None when it is not JSON."""
    if isinstance(value, str):
        text = value.strip()
        if not text or text[0] not in "[{":
            return None
        try:
            value = parsing.json_value(text)  # bounded depth: a stored text can be hostile
        except ValueError:
            return None
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return None


def tool_call_view(raw: Any) -> ToolCall:
    """Normalise one tool call (OpenAI chat shape, flat shape or trajectory shape) for display."""
    if not isinstance(raw, dict):
        return ToolCall(name="tool call", call_id="", arguments=pretty_json(raw) or str(raw))
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    name = fn.get("name") or raw.get("name") or raw.get("tool") or "tool call"
    args = fn.get("arguments", raw.get("arguments", raw.get("args", raw.get("input", {}))))
    text = pretty_json(args)
    if text is None:
        text = args if isinstance(args, str) else str(args)
    return ToolCall(name=str(name), call_id=str(raw.get("id") or ""), arguments=text)


@dataclass
class CallPage:
    transcript: Transcript
    turns: list[TurnView]
    call_verdicts: list  # conversation-level verdicts that flag or errored: shown on top
    passed_verdicts: list  # not flagged, no error: shown folded
    turn_verdicts: list  # (turn, verdict) for flagged verdicts citing a turn, in turn order
    verdict_counts: dict
    duration_ms: int | None
    phases: list[str]
    has_audio: bool
    tool_call_count: int
    metadata_json: str | None = None


def verdict_turns(v: Verdict) -> list[int]:
    """Return the turn indices a verdict cites, first one first."""
    cited = [t for t in (v.turns or []) if isinstance(t, int)]
    if v.turn is not None and v.turn not in cited:
        cited.insert(0, v.turn)
    return cited


def transcript_detail(external_id: str) -> CallPage | None:
    """Return everything the call page shows, in three queries (call, turns, verdicts)."""
    t = (
        Transcript.objects.select_related("agent_version__agent")
        .filter(external_id=external_id)
        .first()
    )
    if t is None:
        return None
    turns = list(
        Turn.objects.filter(transcript=t)
        .order_by("index")
        .only("id", "transcript_id", *Turn.FIELDS)
    )
    verdicts = list(
        Verdict.objects.filter(transcript=t)
        .select_related("rule_version__rule", "judge")
        .order_by(
            "-flagged",
            "rule_version__rule__group",
            "rule_version__rule__rule_id",
            "rule_version__number",
        )
    )
    views: list[TurnView] = []
    by_index: dict[int, TurnView] = {}
    call_names: dict[str, str] = {}
    previous_phase = None
    phases: list[str] = []
    tool_call_count = 0
    for turn in turns:
        view = TurnView(turn=turn)
        if turn.phase and turn.phase != previous_phase:
            view.phase_changed = True
            if turn.phase not in phases:
                phases.append(turn.phase)
        previous_phase = turn.phase or previous_phase
        if turn.tool_calls:
            view.tool_calls = [tool_call_view(c) for c in turn.tool_calls]
            tool_call_count += len(view.tool_calls)
            for c in view.tool_calls:
                if c.call_id:
                    call_names[c.call_id] = c.name
        if turn.speaker == Turn.Speaker.TOOL:
            view.result_json = pretty_json(turn.text)
            view.tool_name = call_names.get(turn.tool_call_id, "")
        if turn.asr_confidence is not None and turn.asr_confidence < LOW_ASR_CONFIDENCE:
            view.low_confidence = True
        views.append(view)
        by_index[turn.index] = view

    call_level, passed = [], []
    counts = {"total": len(verdicts), "flagged": 0, "errored": 0, "passed": 0}
    for v in verdicts:
        if v.error:
            counts["errored"] += 1
        elif v.flagged:
            counts["flagged"] += 1
        else:
            counts["passed"] += 1
        cited = [i for i in verdict_turns(v) if i in by_index]
        v.cited = verdict_turns(v)
        if v.flagged and cited:
            by_index[cited[0]].verdicts.append(v)
            for i in cited[1:]:
                by_index[i].also_cited_by.append(v)
        elif v.flagged or v.error:
            call_level.append(v)
        else:
            passed.append(v)

    starts = [x.start_ms for x in turns if x.start_ms is not None]
    ends = [x.end_ms for x in turns if x.end_ms is not None]
    duration = (max(ends) - min(starts or [0])) if ends else None
    return CallPage(
        transcript=t,
        turns=views,
        call_verdicts=call_level,
        passed_verdicts=passed,
        turn_verdicts=[(tv.turn, v) for tv in views for v in tv.verdicts],
        verdict_counts=counts,
        duration_ms=duration,
        phases=phases,
        has_audio=bool(t.audio_url),
        tool_call_count=tool_call_count,
        metadata_json=pretty_json(t.metadata) if t.metadata else None,
    )


# Rules -----------------------------------------------------------------------------------------


@dataclass
class RuleRow:
    rule: Rule
    latest: RuleVersion | None
    versions: int
    gated_number: int | None
    verdicts: int = 0
    flagged: int = 0
    errored: int = 0

    @property
    def detector_name(self) -> str:
        spec = (
            self.latest.detector if self.latest and self.latest.detector else None
        ) or self.rule.detector
        return (spec or {}).get("name", "") if isinstance(spec, dict) else ""


def rule_list_grouped(*, q: str = "", group: str = "") -> list[tuple[str, list[RuleRow]]]:
    """Return rules grouped by group, each with its
    latest version, gated version and verdict counts."""
    rules = Rule.objects.order_by("group", "rule_id")
    if q:
        rules = rules.filter(Q(rule_id__icontains=q) | Q(versions__text__icontains=q)).distinct()
    if group:
        rules = rules.filter(group=group)
    rules = list(rules)
    versions = defaultdict(list)
    for v in RuleVersion.objects.filter(rule__in=[r.pk for r in rules]).order_by(
        "rule_id", "number"
    ):
        versions[v.rule_id].append(v)
    # The precomputed counts: a few rows per rule version, whatever the number of verdicts.
    if q or group:
        ids = [v.pk for vs in versions.values() for v in vs]
        counts = verdict_counts("rule_version_id", rule_version_id__in=ids)
    else:
        counts = verdict_counts("rule_version_id")
    grouped: dict[str, list[RuleRow]] = {}
    for r in rules:
        vs = versions.get(r.pk, [])
        gated = [v.number for v in vs if v.status == RuleVersion.Status.GATED]
        row = RuleRow(
            rule=r,
            latest=vs[-1] if vs else None,
            versions=len(vs),
            gated_number=gated[-1] if gated else None,
        )
        for v in vs:
            c = counts.get(v.pk)
            if c:
                row.verdicts += c["n"]
                row.flagged += c["flagged"]
                row.errored += c["errored"]
        grouped.setdefault(r.group, []).append(row)
    return list(grouped.items())


@dataclass
class VersionView:
    version: RuleVersion
    verdicts: int = 0
    flagged: int = 0
    errored: int = 0
    judges: int = 0
    detector_json: str | None = None
    previous: RuleVersion | None = None  # the version before it, to show what changed


def rule_detail(rule_id: str) -> tuple[Rule, list[VersionView]] | None:
    """Return a rule and every version of it, newest first, with per-version verdict counts."""
    rule = Rule.objects.filter(rule_id=rule_id).first()
    if rule is None:
        return None
    versions = list(rule.versions.order_by("-number"))

    per_judge = verdict_counts(
        "rule_version_id", "judge_id", rule_version_id__in=[v.pk for v in versions]
    )
    counts: dict[int, dict] = {}
    for (rv, _), c in per_judge.items():
        total = counts.setdefault(rv, {"n": 0, "flagged": 0, "errored": 0, "judges": 0})
        for name in ("n", "flagged", "errored"):
            total[name] += c[name]
        total["judges"] += 1  # a judge with verdicts on the version (keys without are left out)
    views = []
    for i, v in enumerate(versions):
        c = counts.get(v.pk, {})
        views.append(
            VersionView(
                version=v,
                previous=versions[i + 1] if i + 1 < len(versions) else None,
                verdicts=c.get("n", 0),
                flagged=c.get("flagged", 0),
                errored=c.get("errored", 0),
                judges=c.get("judges", 0),
                detector_json=pretty_json(v.detector) if v.detector else None,
            )
        )
    return rule, views


# Verdicts --------------------------------------------------------------------------------------


@dataclass
class VerdictFilters:
    rule: str = ""
    version: int | None = None
    judge: str = ""
    transcript: str = ""
    flagged: bool | None = None
    errored: bool | None = None


def verdict_filtered(filters: VerdictFilters) -> QuerySet[Verdict]:
    """Return verdicts matching the filters, newest first (the one read: page, API, commands)."""
    qs = Verdict.objects.all()
    if filters.rule:
        qs = qs.filter(rule_version__rule__rule_id=filters.rule)
        if filters.version:
            qs = qs.filter(rule_version__number=filters.version)
    elif filters.version:
        qs = qs.filter(rule_version__number=filters.version)
    if filters.judge:
        qs = qs.filter(judge__name=filters.judge)
    if filters.transcript:
        qs = qs.filter(transcript__external_id=filters.transcript)
    if filters.flagged is not None:
        qs = qs.filter(flagged=filters.flagged)
    if filters.errored is True:
        qs = qs.exclude(OK)
    elif filters.errored is False:
        qs = qs.filter(OK)
    return qs.order_by("-id")


def verdict_list_page(filters: VerdictFilters, *, page: int, per_page: int = PER_PAGE) -> Page:
    """Return a page of verdicts with their call, rule version and judge, in one query."""
    qs = verdict_filtered(filters).select_related("transcript", "rule_version__rule", "judge")
    result = page_of(qs, page=page, per_page=per_page)
    for v in result.rows:
        v.cited = verdict_turns(v)
    return result


def verdict_filter_choices() -> dict[str, list]:
    """Return the options for the verdicts list's filters: rules and judges."""
    return {
        "rules": list(Rule.objects.order_by("rule_id").values_list("rule_id", flat=True)),
        "judges": list(Judge.objects.order_by("name").values_list("name", flat=True)),
    }
