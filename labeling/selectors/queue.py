"""Reads for the review queue: held calls, progress, and what the review page shows."""

import json
from dataclasses import dataclass
from datetime import datetime

from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from evals.catalog.models import Transcript, Turn
from evals.judging.models import Verdict
from evals.rules.models import Rule
from labeling.models import Assignment, Mark, SampleItem


def assignment_held(*, reviewer, now: datetime | None = None) -> Assignment | None:
    """Return the reviewer's unfinished call whose lease has not lapsed, or None."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(
            reviewer=reviewer,
            finished_at__isnull=True,
            released_at__isnull=True,
            lease_expires_at__gt=now,
        )
        .select_related("item__transcript", "item__sample")
        .order_by("-claimed_at")
        .first()
    )


def assignment_for_review(*, reviewer, transcript: Transcript) -> Assignment | None:
    """Return the reviewer's assignment on this call
    that the review page may show (held or finished)."""
    return (
        Assignment.objects.filter(
            reviewer=reviewer, item__transcript=transcript, released_at__isnull=True
        )
        .select_related("item__sample")
        .order_by("-claimed_at")
        .first()
    )


def verdicts_markable(*, transcript: Transcript) -> QuerySet[Verdict]:
    """Return the verdicts on a call that people mark: every one that did not error."""
    return Verdict.objects.filter(transcript=transcript, error="")


def verdicts_unmarked_count(*, reviewer, transcript: Transcript) -> int:
    """Return how many markable verdicts on the call lack this reviewer's mark."""
    mine = Mark.objects.filter(verdict=OuterRef("pk"), reviewer=reviewer)
    return verdicts_markable(transcript=transcript).exclude(Exists(mine)).count()


def assignments_finished_today(*, reviewer) -> QuerySet[Assignment]:
    """Return the calls this reviewer finished today,
    newest first (they may go back and change marks)."""
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return (
        Assignment.objects.filter(reviewer=reviewer, finished_at__gte=start)
        .select_related("item__transcript")
        .order_by("-finished_at")
    )


def assignments_holding(now: datetime) -> Q:
    """Assignments that take up one of an item's review
    slots: finished, or held under a live lease."""
    return Q(finished_at__isnull=False) | Q(released_at__isnull=True, lease_expires_at__gt=now)


@dataclass(frozen=True)
class ReviewQueue:
    """Which calls a reviewer asks for: every sampled call, or only those where the judge flagged
    something (anything, a rule of one group, or one rule: a lead's judge-check queue)."""

    flagged: bool = False
    group: str = ""
    rule: str = ""

    @classmethod
    def parse(cls, value: str | None) -> "ReviewQueue":
        """Read "all", "flagged", "group:<name>" or "rule:<id>"; anything else means all."""
        kind, _, name = (value or "").strip().partition(":")
        if kind == "flagged":
            return cls(flagged=True)
        if kind == "group" and name:
            return cls(flagged=True, group=name)
        if kind == "rule" and name:
            return cls(flagged=True, rule=name)
        return cls()

    @property
    def key(self) -> str:
        if self.rule:
            return f"rule:{self.rule}"
        if self.group:
            return f"group:{self.group}"
        return "flagged" if self.flagged else "all"

    @property
    def label(self) -> str:
        if self.rule:
            return f"calls where the judge flagged {self.rule}"
        if self.group:
            return f"calls where the judge flagged a rule of {self.group}"
        return "calls where the judge flagged something" if self.flagged else "every sampled call"

    def verdicts(self) -> Q:
        """The verdicts this queue is about (all of them for the plain queue)."""
        q = Q(flagged=True) if self.flagged else Q()
        if self.group:
            q &= Q(rule_version__rule__group=self.group)
        if self.rule:
            q &= Q(rule_version__rule__rule_id=self.rule)
        return q


def review_queue_choices() -> dict[str, list[str]]:
    """Return the rule groups and rule ids a reviewer can pick a queue by, sorted."""
    rules = list(Rule.objects.order_by("group", "rule_id").values_list("group", "rule_id"))
    return {
        "groups": sorted({g for g, _ in rules if g}),
        "rules": [r for _, r in rules],
    }


def sample_items_claimable(
    *, reviewer, now: datetime | None = None, queue: ReviewQueue | None = None
) -> QuerySet[SampleItem]:
    """Return the items this reviewer may claim (open slots, a call never seen), in queue order,
    only those the chosen queue asks for."""
    now = now or timezone.now()
    taken = (
        Assignment.objects.filter(assignments_holding(now), item=OuterRef("pk"))
        .order_by()
        .values("item")
        .annotate(c=Count("pk"))
        .values("c")
    )
    seen = Assignment.objects.filter(reviewer=reviewer).values("item__transcript_id")
    items = SampleItem.objects.filter(sample__day__lte=timezone.localdate(now))
    if queue is not None and queue.flagged:
        wanted = Verdict.objects.filter(queue.verdicts(), transcript_id=OuterRef("transcript_id"))
        items = items.filter(Exists(wanted))
    return (
        items.exclude(transcript_id__in=seen)
        .annotate(taken=Coalesce(Subquery(taken, output_field=IntegerField()), Value(0)))
        .filter(taken__lt=F("reviews_needed"))
        .order_by("-sample__day", "pk")
    )


@dataclass(frozen=True)
class Progress:
    done: int
    left: int

    @property
    def total(self) -> int:
        return self.done + self.left


def progress_today(*, reviewer) -> dict[str, Progress]:
    """Return today's progress: calls done and left, for the reviewer and for the team."""
    today = timezone.localdate()
    now = timezone.now()
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    items = SampleItem.objects.filter(sample__day=today)
    needed = items.aggregate(n=Sum("reviews_needed"))["n"] or 0
    team_done = Assignment.objects.filter(
        item__sample__day=today, finished_at__isnull=False
    ).count()
    mine_done = Assignment.objects.filter(reviewer=reviewer, finished_at__gte=start).count()
    open_for_me = (
        sample_items_claimable(reviewer=reviewer, now=now).filter(sample__day=today).count()
    )
    held = assignment_held(reviewer=reviewer, now=now)
    if held is not None and held.item.sample.day == today:
        open_for_me += 1
    return {
        "mine": Progress(done=mine_done, left=open_for_me),
        "team": Progress(done=team_done, left=max(needed - team_done, 0)),
    }


@dataclass
class ReviewPage:
    transcript: Transcript
    assignment: Assignment
    turns: list
    top_verdicts: list
    marked: int
    markable: int
    duration_ms: int = 0  # the end of the last timed turn: the timeline's length
    turn_verdicts: int = 0  # verdicts shown beside the turn they cite
    top_flagged: int = 0  # whole-call verdicts the judge flagged
    flagged_unmarked: int = 0  # flagged verdicts still waiting for this reviewer's mark
    clean_unmarked: int = 0  # unflagged ones: what "mark the rest right" would mark


def review_page_data(*, reviewer, transcript: Transcript, assignment: Assignment) -> ReviewPage:
    """Return the call's turns with the verdicts that cite them, and this reviewer's marks only."""
    verdicts = list(
        Verdict.objects.filter(transcript=transcript)
        .select_related("rule_version__rule", "judge")
        .order_by("-flagged", "rule_version__rule__rule_id", "pk")
    )
    marks = {
        m.verdict_id: m
        for m in Mark.objects.filter(reviewer=reviewer, verdict__transcript=transcript)
    }
    turns = list(Turn.objects.filter(transcript=transcript).order_by("index"))
    by_turn: dict[int, list] = {}
    top: list = []
    indexes = {t.index for t in turns}
    for v in verdicts:
        v.my_mark = marks.get(v.pk)
        if v.turn is not None and v.turn in indexes:
            by_turn.setdefault(v.turn, []).append(v)
        else:
            top.append(v)
    previous_phase = None
    for t in turns:
        t.verdicts_here = by_turn.get(t.index, [])
        t.flagged_here = any(v.flagged for v in t.verdicts_here)
        t.phase_starts = bool(t.phase) and t.phase != previous_phase
        timed = t.start_ms is not None and t.end_ms is not None and t.end_ms > t.start_ms
        t.span_ms = t.end_ms - t.start_ms if timed else None
        t.tool_calls_text = (
            json.dumps(t.tool_calls, indent=2, ensure_ascii=False) if t.tool_calls else ""
        )
        previous_phase = t.phase or previous_phase
    markable = sum(1 for v in verdicts if not v.error)
    marked = sum(1 for v in verdicts if not v.error and v.my_mark is not None)
    return ReviewPage(
        transcript=transcript,
        assignment=assignment,
        turns=turns,
        top_verdicts=top,
        marked=marked,
        markable=markable,
        duration_ms=max((t.end_ms or t.start_ms or 0 for t in turns), default=0),
        turn_verdicts=len(verdicts) - len(top),
        top_flagged=sum(1 for v in top if v.flagged),
        flagged_unmarked=sum(1 for v in verdicts if v.flagged and not v.error and not v.my_mark),
        clean_unmarked=sum(1 for v in verdicts if not v.flagged and not v.error and not v.my_mark),
    )
