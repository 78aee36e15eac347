"""The issue sheet: its filters, their parsing and keyset pages."""

import base64
import datetime as dt
import json
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet

from core import parsing
from core.errors import DomainError
from core.permissions import users_with_permission
from evals.catalog.models import AgentVersion
from evals.judging.selectors.browse import day_start
from evals.rules.models import Rule, Severity
from labeling.models import IssueRow

Status = IssueRow.Status
Outcome = IssueRow.Outcome

from .detail import rule_version_progress

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
    try:
        return parsing.calendar_date(params.get(name), field=name)
    except DomainError as exc:
        raise IssueRowFilterError(name, str(exc)) from None


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


def sheet_ordering(sort: str, reverse: bool = False) -> list[str]:
    column, desc = SORTS[sort]
    desc = desc != reverse
    cols = [column] if column == "number" else [column, "number"]
    return [f"-{c}" if desc else c for c in cols]


def cursor_encode(row: IssueRow, sort: str) -> str:
    column, _ = SORTS[sort]
    value = getattr(row, column)
    if isinstance(value, dt.datetime):
        value = value.isoformat()
    raw = json.dumps([value, row.number], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_decode(cursor: str, sort: str, name: str):
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, number = parsing.json_value(raw)  # bounded depth and numbers: a cursor is input
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
    rows = list(qs.order_by(*sheet_ordering(sort, reverse=backward))[: size + 1])
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
            page.next_cursor = cursor_encode(rows[-1], sort)
        if (more and backward) or (after and not backward):
            page.prev_cursor = cursor_encode(rows[0], sort)
    page.progress = rule_version_progress({r.rule_version_id for r in rows if r.rule_version_id})
    for r in rows:
        r.progress = page.progress.get(r.rule_version_id)
    return page


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


def assignable_users() -> QuerySet:
    """Return the active users who may be assigned rows: those holding the triage permission."""
    return users_with_permission("triage")
