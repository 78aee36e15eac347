"""Reads for the issue sheet: filters, keyset pages,
CSV export, row progress, prefills and trends."""

import base64
import csv
import datetime as dt
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.text import slugify

from core.errors import DomainError
from evals.models import AgentVersion, Rule, RuleVersion, Severity, Verdict
from evals.selectors.browse import day_start
from labeling.models import IssueRow, Mark, SampleItem

Status = IssueRow.Status
Outcome = IssueRow.Outcome

UNTRIAGED = "untriaged"  # how the empty outcome is spelled in URLs and the API
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}
PAGE_SIZE = 50

# sort key -> (column, descending). Ties break on number in the same direction, so (column, number)
# indexes serve every sort. Severity sorts alphabetically,
# which puts critical, major, minor in order.
SORTS: dict[str, tuple[str, bool]] = {
    "-number": ("number", True),
    "number": ("number", False),
    "severity": ("severity", False),
    "-severity": ("severity", True),
    "status": ("status", False),
    "-status": ("status", True),
    "-updated": ("updated_at", True),
    "updated": ("updated_at", False),
}
SORT_LABELS = {
    "-number": "newest first",
    "number": "oldest first",
    "severity": "most severe first",
    "-severity": "least severe first",
    "status": "status A-Z",
    "-status": "status Z-A",
    "-updated": "recently changed",
    "updated": "least recently changed",
}
STANDARD_GROUPS = [
    "opening",
    "asking",
    "acknowledging",
    "language",
    "requests",
    "boundaries",
    "closing",
]
GROUP_KEYWORDS = [
    ("opening", ("greet", "hello", "introduc", "opening")),
    ("closing", ("goodbye", "bye", "closing", "wrap up", "next steps", "hang up")),
    ("boundaries", ("rubric", "hint", "salary", "leak", "personal", "confidential", "answer")),
    ("asking", ("question", "asks", "asked", "follow-up", "follow up")),
    ("acknowledging", ("acknowledg", "thank", "interrupt", "talks over", "talk over", "listen")),
    ("language", ("language", "jargon", "emoji", "markdown", "tone", "rude", "swear")),
    ("requests", ("request", "repeat", "reschedul", "accommodat")),
]
CSV_COLUMNS = [
    "number",
    "created",
    "status",
    "outcome",
    "severity",
    "audio_only",
    "call",
    "agent_version",
    "turn",
    "what",
    "reporter",
    "assignee",
    "rule",
    "rule_version",
    "duplicate_of",
    "signal_request",
    "reason",
    "link",
]


class IssueRowFilterError(DomainError, ValueError):
    """A bad sheet filter; `field` names the query parameter."""

    def __init__(self, field: str, message: str):
        super().__init__(message, field=field)


@dataclass
class SheetFilters:
    status: list[str] = field(default_factory=list)
    severity: list[str] = field(default_factory=list)
    outcome: list[str] = field(default_factory=list)
    rule: str = ""
    agent_version: str = ""
    reporter: str = ""
    assignee: str = ""
    since: dt.date | None = None
    until: dt.date | None = None
    audio_only: bool | None = None
    q: str = ""
    sort: str = "-number"


def _choices(params, name: str, allowed: list[str]) -> list[str]:
    values = [v for raw in params.getlist(name) for v in raw.split(",") if v.strip()]
    for v in values:
        if v not in allowed:
            raise IssueRowFilterError(name, f"unknown value {v!r} (one of {', '.join(allowed)})")
    return values


def _date(params, name: str) -> dt.date | None:
    raw = (params.get(name) or "").strip()
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise IssueRowFilterError(name, f"{raw!r} is not a date (YYYY-MM-DD)") from None


def issue_sheet_filters_parse(params) -> SheetFilters:
    """Return the sheet filters from a QueryDict, or
    raise IssueRowFilterError naming the parameter."""
    audio = (params.get("audio_only") or "").strip().lower()
    if audio and audio not in TRUE_WORDS | FALSE_WORDS:
        raise IssueRowFilterError("audio_only", f"{audio!r} is not true or false")
    sort = (params.get("sort") or "-number").strip()
    if sort not in SORTS:
        raise IssueRowFilterError("sort", f"unknown sort {sort!r} (one of {', '.join(SORTS)})")
    filters = SheetFilters(
        status=_choices(params, "status", Status.values),
        severity=_choices(params, "severity", Severity.values),
        outcome=_choices(params, "outcome", [UNTRIAGED, *[o for o in Outcome.values if o]]),
        rule=(params.get("rule") or "").strip(),
        agent_version=(params.get("agent_version") or "").strip(),
        reporter=(params.get("reporter") or "").strip(),
        assignee=(params.get("assignee") or "").strip(),
        since=_date(params, "since"),
        until=_date(params, "until"),
        audio_only=None if not audio else audio in TRUE_WORDS,
        q=(params.get("q") or "").strip()[:200],
        sort=sort,
    )
    if filters.since and filters.until and filters.since > filters.until:
        raise IssueRowFilterError("until", "is before since")
    return filters


def issue_rows_filtered(filters: SheetFilters) -> QuerySet:
    """Return the issue rows matching the filters,
    unordered, with what the sheet shows joined in."""
    qs = IssueRow.objects.select_related(
        "transcript__agent_version", "reporter", "assignee", "rule", "rule_version", "duplicate_of"
    )
    if filters.status:
        qs = qs.filter(status__in=filters.status)
    if filters.severity:
        qs = qs.filter(severity__in=filters.severity)
    if filters.outcome:
        qs = qs.filter(outcome__in=["" if o == UNTRIAGED else o for o in filters.outcome])
    if filters.rule:
        qs = qs.filter(rule__rule_id=filters.rule)
    if filters.agent_version:
        qs = qs.filter(transcript__agent_version__version=filters.agent_version)
    if filters.reporter:
        qs = qs.filter(reporter__username=filters.reporter)
    if filters.assignee == "none":
        qs = qs.filter(assignee__isnull=True)
    elif filters.assignee:
        qs = qs.filter(assignee__username=filters.assignee)
    if filters.since:
        qs = qs.filter(created_at__gte=day_start(filters.since))
    if filters.until:
        qs = qs.filter(created_at__lt=day_start(filters.until + dt.timedelta(days=1)))
    if filters.audio_only is not None:
        qs = qs.filter(audio_only=filters.audio_only)
    if filters.q:
        qs = qs.filter(what__icontains=filters.q)
    return qs


def _ordering(sort: str, reverse: bool = False) -> list[str]:
    column, desc = SORTS[sort]
    desc = desc != reverse
    cols = [column] if column == "number" else [column, "number"]
    return [f"-{c}" if desc else c for c in cols]


def _cursor_encode(row: IssueRow, sort: str) -> str:
    column, _ = SORTS[sort]
    value = getattr(row, column)
    if isinstance(value, dt.datetime):
        value = value.isoformat()
    raw = json.dumps([value, row.number], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_decode(cursor: str, sort: str, name: str):
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, number = json.loads(raw)
        number = int(number)
        if SORTS[sort][0] == "updated_at":
            value = dt.datetime.fromisoformat(value)
        elif SORTS[sort][0] != "number" and not isinstance(value, str):
            raise ValueError
    except (ValueError, TypeError, json.JSONDecodeError):
        raise IssueRowFilterError(name, "not a cursor from this sheet") from None
    return value, number


def _past(sort: str, value, number: int, forward: bool) -> Q:
    """Return the condition for rows strictly past (value, number) in the sort's direction."""
    column, desc = SORTS[sort]
    down = desc == forward  # moving toward smaller keys
    op, op_eq = ("lt", "lte") if down else ("gt", "gte")
    if column == "number":
        return Q(**{f"number__{op}": number})
    # The leading inclusive bound lets the database seek the (column, number) index.
    return Q(**{f"{column}__{op_eq}": value}) & (
        Q(**{f"{column}__{op}": value}) | Q(**{f"number__{op}": number})
    )


@dataclass
class SheetPage:
    rows: list
    total: int
    size: int
    sort: str
    next_cursor: str = ""
    prev_cursor: str = ""
    progress: dict = field(default_factory=dict)


def issue_sheet_page(
    *,
    filters: SheetFilters,
    after: str = "",
    before: str = "",
    size: int = PAGE_SIZE,
    with_total: bool = True,
) -> SheetPage:
    """Return one keyset page of the sheet (a fixed number of queries whatever the sheet's size)."""
    size = max(1, int(size))
    sort = filters.sort
    qs = issue_rows_filtered(filters)
    backward = bool(before) and not after
    if after:
        qs = qs.filter(_past(sort, *_cursor_decode(after, sort, "after"), forward=True))
    elif before:
        qs = qs.filter(_past(sort, *_cursor_decode(before, sort, "before"), forward=False))
    rows = list(qs.order_by(*_ordering(sort, reverse=backward))[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    if backward:
        rows.reverse()
    page = SheetPage(
        rows=rows,
        total=issue_rows_filtered(filters).count() if with_total else -1,
        size=size,
        sort=sort,
    )
    if rows:
        if more or backward:
            page.next_cursor = _cursor_encode(rows[-1], sort)
        if (more and backward) or (after and not backward):
            page.prev_cursor = _cursor_encode(rows[0], sort)
    page.progress = rule_version_progress({r.rule_version_id for r in rows if r.rule_version_id})
    for r in rows:
        r.progress = page.progress.get(r.rule_version_id)
    return page


def rule_version_progress(version_ids) -> dict[int, dict]:
    """Return, per rule version id: verdicts judged, flagged,
    marks, marks wrong, status and the gated version."""
    ids = set(version_ids)
    if not ids:
        return {}
    out = {
        v.pk: {
            "rule": v.rule.rule_id,
            "version": v.number,
            "status": v.status,
            "verdicts": 0,
            "flagged": 0,
            "errored": 0,
            "marks": 0,
            "wrong": 0,
            "gated_version": None,
            "rule_pk": v.rule_id,
        }
        for v in RuleVersion.objects.filter(pk__in=ids).select_related("rule")
    }
    for r in (
        Verdict.objects.filter(rule_version_id__in=ids)
        .values("rule_version_id")
        .annotate(
            n=Count("id", filter=Q(error="")),
            flagged=Count("id", filter=Q(error="", flagged=True)),
            errored=Count("id", filter=~Q(error="")),
        )
    ):
        out[r["rule_version_id"]].update(
            verdicts=r["n"], flagged=r["flagged"], errored=r["errored"]
        )
    for r in (
        Mark.objects.filter(verdict__rule_version_id__in=ids)
        .values("verdict__rule_version_id")
        .annotate(n=Count("id"), wrong=Count("id", filter=Q(correct=False)))
    ):
        out[r["verdict__rule_version_id"]].update(marks=r["n"], wrong=r["wrong"])
    gated = dict(
        RuleVersion.objects.filter(
            rule_id__in={p["rule_pk"] for p in out.values()}, status=RuleVersion.Status.GATED
        )
        .order_by("rule_id", "number")
        .values_list("rule_id", "number")
    )
    for p in out.values():
        p["gated_version"] = gated.get(p["rule_pk"])
    return out


def issue_row_next_steps(row: IssueRow, progress: dict | None = None) -> list[dict]:
    """Return the steps after triage for the row's
    linked rule version, each with done and a note."""
    if row.outcome == Outcome.NEW_SIGNAL and not row.rule_version_id and row.signal_request:
        return [
            {"step": "detector requested", "done": True, "note": row.signal_request[:120]},
            {"step": "detector built", "done": False, "note": "no such detector yet"},
        ]
    if not row.rule_version_id:
        return []
    p = (
        progress
        if progress is not None
        else rule_version_progress([row.rule_version_id]).get(row.rule_version_id)
    )
    if not p:
        return []
    written = "written" if row.outcome != Outcome.NEW_SIGNAL else "linked"
    steps = [
        {"step": written, "done": True, "note": f"{p['rule']} v{p['version']} ({p['status']})"},
        {
            "step": "judged",
            "done": p["verdicts"] > 0,
            "note": f"{p['verdicts']} verdicts, {p['flagged']} flagged"
            if p["verdicts"]
            else "no verdicts yet",
        },
        {
            "step": "judge checked",
            "done": p["marks"] > 0,
            "note": f"{p['marks']} marks, {p['wrong']} wrong" if p["marks"] else "no marks yet",
        },
    ]
    promoted = p["status"] == RuleVersion.Status.GATED
    note = "in the gate" if promoted else f"not yet ({p['status']})"
    if not promoted and p["gated_version"] and p["gated_version"] != p["version"]:
        note += f"; v{p['gated_version']} stays in the gate until then"
    steps.append({"step": "promoted", "done": promoted, "note": note})
    return steps


def _flagged_at_turn(row: IssueRow) -> QuerySet:
    return Verdict.objects.filter(transcript_id=row.transcript_id, flagged=True, error="").filter(
        Q(turn=row.turn) | Q(turns__contains=[row.turn])
        if connection.vendor == "postgresql"
        else Q(turn=row.turn)
    )


def issue_row_suggested_way(row: IssueRow) -> str:
    """Return the way a row most likely goes: signal (audio
    only), fix (a rule fired at its turn) or rule."""
    if row.audio_only:
        return "signal"
    if row.turn is not None and _flagged_at_turn(row).exists():
        return "fix"
    return "rule"


def issue_row_judged_at_turn(row: IssueRow) -> list:
    """Return the flagged verdicts at the row's turn,
    with their rules: what the judge said there."""
    if row.turn is None:
        return []
    return list(
        _flagged_at_turn(row)
        .select_related("rule_version__rule", "judge")
        .order_by("rule_version__rule__rule_id")
    )


def issue_row_detail(number: int) -> IssueRow:
    """Return the row with what its detail page shows, or raise IssueRow.DoesNotExist."""
    return IssueRow.objects.select_related(
        "transcript__agent_version__agent",
        "reporter",
        "assignee",
        "rule",
        "rule_version__rule",
        "duplicate_of",
    ).get(number=number)


EVENT_LABELS = {
    "filed": "filed the row",
    "assign": "assigned",
    "status": "changed the status",
    "duplicate": "closed it as a duplicate",
    "wont_fix": "closed it as won't fix",
    "comment": "commented",
    "write_rule": "wrote a rule",
    "add_signal": "added a signal",
    "fix_rule": "fixed the rule",
}


def issue_row_events(row: IssueRow) -> list:
    """Return the row's history, oldest first, with actors and a label for each kind."""
    labels = {"status": dict(Status.choices), "outcome": {**dict(Outcome.choices), "": "untriaged"}}
    events = list(row.events.select_related("actor").order_by("at", "id"))
    for e in events:
        e.label = EVENT_LABELS.get(e.kind, e.kind.replace("_", " "))
        e.changes = [
            {
                "field": field.replace("_", " "),
                "old": labels.get(field, {}).get(old, old),
                "new": labels.get(field, {}).get(new, new),
            }
            for field, (old, new) in (e.data.get("changes") or {}).items()
        ]
    return events


def issue_sheet_options() -> dict:
    """Return the choices the sheet's filter form offers."""
    return {
        "statuses": Status.choices,
        "severities": Severity.choices,
        "outcomes": [(UNTRIAGED, "untriaged"), *[(v, label) for v, label in Outcome.choices if v]],
        # Every rule and every reviewer, not DISTINCT over
        # the rows: the options cost nothing at 100,000 rows.
        "rules": list(Rule.objects.order_by("rule_id").values_list("rule_id", flat=True)),
        "agent_versions": list(
            AgentVersion.objects.order_by("version").values_list("version", flat=True).distinct()
        ),
        "reporters": list(users_with_permission("review").values_list("username", flat=True)),
        "assignees": list(assignable_users().values_list("username", flat=True)),
        "sorts": list(SORT_LABELS.items()),
    }


def users_with_permission(codename: str) -> QuerySet:
    """Return the active users holding a console permission, through a role or directly."""
    User = get_user_model()
    perm = Q(
        groups__permissions__codename=codename,
        groups__permissions__content_type__app_label="console",
    )
    perm |= Q(
        user_permissions__codename=codename, user_permissions__content_type__app_label="console"
    )
    return (
        User.objects.filter(is_active=True)
        .filter(perm | Q(is_superuser=True))
        .distinct()
        .order_by("username")
    )


def assignable_users() -> QuerySet:
    """Return the active users who may be assigned rows: those holding the triage permission."""
    return users_with_permission("triage")


def call_link(row: IssueRow) -> str:
    """Return the call page URL opened at the row's turn (the player cues the audio there)."""
    from django.urls import reverse

    url = reverse("transcript-detail", args=[row.transcript.external_id])
    if row.turn is None:
        return url
    return f"{url}?turn={row.turn}#turn-{row.turn}"


# ---- CSV --------------------------------------------------------------------------------------

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value) -> str:
    """Return a cell a spreadsheet shows as text:
    formula-looking strings get a leading apostrophe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if text.startswith(FORMULA_START):
        return "'" + text
    return text


CSV_FIELDS = [
    "number",
    "created_at",
    "status",
    "outcome",
    "severity",
    "audio_only",
    "transcript__external_id",
    "transcript__agent_version__version",
    "turn",
    "what",
    "reporter__username",
    "assignee__username",
    "rule__rule_id",
    "rule_version__number",
    "duplicate_of__number",
    "signal_request",
    "reason",
]


def _csv_records(qs: QuerySet, base_url: str, chunk: int) -> Iterator[list]:
    """Yield one list of cell values per row; plain tuples,
    not model instances, keep 100,000 rows quick."""
    from urllib.parse import quote

    from django.urls import reverse

    call_prefix = base_url + reverse("transcript-detail", args=["0"])[:-2]  # ".../calls/"
    statuses, outcomes = dict(Status.choices), dict(Outcome.choices)
    tz = timezone.get_current_timezone()
    for (
        number,
        created,
        status,
        outcome,
        severity,
        audio_only,
        call,
        version,
        turn,
        what,
        reporter,
        assignee,
        rule,
        rule_version,
        duplicate_of,
        signal_request,
        reason,
    ) in qs.values_list(*CSV_FIELDS).iterator(chunk):
        link = f"{call_prefix}{quote(call, safe='')}/" + (
            f"?turn={turn}#turn-{turn}" if turn is not None else ""
        )
        yield [
            number,
            created.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            statuses.get(status, status),
            outcomes.get(outcome, outcome) if outcome else "",
            severity,
            audio_only,
            call,
            version,
            turn,
            what,
            reporter,
            assignee or "",
            rule or "",
            rule_version if rule_version is not None else "",
            duplicate_of if duplicate_of is not None else "",
            signal_request,
            reason,
            link,
        ]


class _Echo:
    def write(self, value):
        return value


def issue_sheet_csv(
    filters: SheetFilters, *, base_url: str = "", chunk: int = 2000
) -> Iterator[str]:
    """Yield the filtered sheet as CSV lines: a BOM, a header, then one escaped line per row."""
    writer = csv.writer(_Echo())
    yield "\ufeff" + writer.writerow(CSV_COLUMNS)
    qs = issue_rows_filtered(filters).order_by(*_ordering(filters.sort))
    for record in _csv_records(qs, base_url, chunk):
        yield writer.writerow([csv_cell(v) for v in record])


# ---- prefills for the three ways --------------------------------------------------------------


def _known_groups() -> list[str]:
    existing = list(Rule.objects.order_by().values_list("group", flat=True).distinct())
    return sorted(set(existing) | set(STANDARD_GROUPS))


def issue_row_group_guess(row: IssueRow) -> str:
    """Return a likely rule group: the turn's phase, else
    keywords in what, else the judged rules at that turn."""
    turn = (
        row.transcript.turns.filter(index=row.turn).values("phase").first()
        if row.turn is not None
        else None
    )
    if turn and turn["phase"]:
        return turn["phase"]
    what = row.what.lower()
    for group, words in GROUP_KEYWORDS:
        if any(w in what for w in words):
            return group
    if row.turn is not None:
        groups = Counter(
            Verdict.objects.filter(transcript_id=row.transcript_id, turn=row.turn).values_list(
                "rule_version__rule__group", flat=True
            )
        )
        if groups:
            return groups.most_common(1)[0][0]
    return "asking"


def _unique_rule_id(base: str) -> str:
    taken = set(Rule.objects.filter(rule_id__startswith=base).values_list("rule_id", flat=True))
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def issue_row_rule_prefill(row: IssueRow) -> dict:
    """Return the new-rule form's initial values drawn from the row."""
    group = issue_row_group_guess(row)
    words = re.sub(r"\b(at )?\d{1,2}:\d{2}\b", " ", row.what.lower()).split()
    slug = slugify(" ".join(words[:6]))[:60].strip("-") or f"row-{row.number}"
    text = re.sub(r"\s+", " ", row.what).strip()
    return {
        "rule_id": _unique_rule_id(f"{slugify(group) or 'rules'}.{slug}"),
        "group": group,
        "text": text,
        "severity": row.severity,
        "groups": _known_groups(),
    }


def issue_row_signal_prefill(row: IssueRow) -> dict:
    """Return the signal form's initial values: detector rules to link, and a new rule id."""
    return {
        "rule_id": _unique_rule_id(f"signals.row-{row.number}"),
        "group": "signals",
        "severity": row.severity,
        "detector_rules": list(Rule.objects.filter(detector__isnull=False).order_by("rule_id")),
    }


def issue_row_fix_choices(row: IssueRow) -> dict:
    """Return the rules an engineer is likely fixing: those
    judged on this call, flagged at the turn first."""
    judged = (
        Verdict.objects.filter(transcript_id=row.transcript_id)
        .select_related("rule_version__rule")
        .order_by("rule_version__rule__rule_id", "-rule_version__number")
    )
    likely, seen = [], set()
    for v in judged:
        rule = v.rule_version.rule
        if rule.pk in seen:
            continue
        seen.add(rule.pk)
        at_turn = (
            v.flagged
            and row.turn is not None
            and (v.turn == row.turn or row.turn in (v.turns or []))
        )
        likely.append((0 if at_turn else 1 if v.flagged else 2, rule.rule_id, rule))
    likely.sort(key=lambda t: (t[0], t[1]))
    others = Rule.objects.exclude(pk__in=seen).order_by("rule_id").only("rule_id")
    return {"likely": [r for _, _, r in likely], "others": list(others)}


def rule_current_version(rule: Rule) -> RuleVersion | None:
    """Return the rule's latest version (the text a fix starts from)."""
    return rule.versions.order_by("-number").first()


# ---- trends -----------------------------------------------------------------------------------


@dataclass
class Trends:
    days: list[dt.date]
    rows_by_outcome: dict  # day -> {outcome: n}
    outcomes: list[tuple[str, str]]
    reviewed: dict  # day -> {"uniform": n, "judge_check": n}
    found: dict  # day -> {"new_failures": rows filed, "judge_wrong": marks wrong}


def issue_trends(*, days: int = 28, today: dt.date | None = None) -> Trends:
    """Return per-day figures for the trends panel over the last `days` days."""
    today = today or timezone.localdate()
    start = today - dt.timedelta(days=days - 1)
    since = day_start(start)
    span = [start + dt.timedelta(days=i) for i in range(days)]
    by_outcome: dict = defaultdict(dict)
    for r in (
        IssueRow.objects.filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at"))
        .values("day", "outcome")
        .annotate(n=Count("id"))
        .order_by()
    ):
        by_outcome[r["day"]][r["outcome"] or UNTRIAGED] = r["n"]
    reviewed: dict = defaultdict(dict)
    for r in (
        SampleItem.objects.filter(sample__day__gte=start, assignments__finished_at__isnull=False)
        .values("sample__day", "reason")
        .annotate(n=Count("id", distinct=True))
        .order_by()
    ):
        reviewed[r["sample__day"]][r["reason"]] = r["n"]
    found: dict = defaultdict(dict)
    for day, n in by_outcome.items():
        found[day]["new_failures"] = sum(n.values())
    for r in (
        Mark.objects.filter(created_at__gte=since, correct=False)
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
    ):
        found[r["day"]]["judge_wrong"] = r["n"]
    outcomes = [(UNTRIAGED, "untriaged"), *[(v, label) for v, label in Outcome.choices if v]]
    return Trends(
        days=span,
        rows_by_outcome=dict(by_outcome),
        outcomes=outcomes,
        reviewed=dict(reviewed),
        found=dict(found),
    )
