"""The issue sheet's trends panel: rows filed, calls reviewed and judge errors found, per day."""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Exists, OuterRef
from django.db.models.functions import TruncDate
from django.utils import timezone

from evals.judging.selectors.browse import day_start
from labeling.models import Assignment, IssueRow, Mark, SampleItem

Status = IssueRow.Status
Outcome = IssueRow.Outcome

from .sheet import UNTRIAGED


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
    # The window's items that some review finished (EXISTS: an item reviewed twice counts once,
    # without a join of every review to make distinct again).
    finished = Assignment.objects.filter(item=OuterRef("pk"), finished_at__isnull=False)
    for r in (
        SampleItem.objects.filter(Exists(finished), sample__day__gte=start)
        .values("sample__day", "reason")
        .annotate(n=Count("*"))
        .order_by()
    ):
        reviewed[r["sample__day"]][r["reason"]] = r["n"]
    found: dict = defaultdict(dict)
    for day, n in by_outcome.items():
        found[day]["new_failures"] = sum(n.values())
    for r in (
        Mark.objects.filter(created_at__gte=since, correct=False)  # index mark_wrong_at alone
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("*"))
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
