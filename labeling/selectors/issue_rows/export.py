"""The issue sheet as CSV, streamed, safe to open in a spreadsheet."""

import csv
from collections.abc import Iterator

from django.db.models import QuerySet
from django.utils import timezone

from labeling.models import IssueRow

Status = IssueRow.Status
Outcome = IssueRow.Outcome

from .sheet import SheetFilters, issue_rows_filtered, sheet_ordering

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
    qs = issue_rows_filtered(filters).order_by(*sheet_ordering(filters.sort))
    for record in _csv_records(qs, base_url, chunk):
        yield writer.writerow([csv_cell(v) for v in record])
