"""Reads for outcomes: the questions a reviewer answers, outcome figures per agent version and
week, what predicts the outcome, and the bad calls nothing flagged.

A call's outcome on a question is the mean of its reviewers' ratings (one per reviewer). It weighs
like a marked verdict in calibration (labeling.selectors.resolution.sample_weight): 1 / the
largest inclusion probability of the sample items its ratings came through, 1 outside the sample.
So oversampling flagged calls to check the judge does not drag the outcome figures down.

What predicts the outcome comes from checks that fired or not on each rated call: every verdict
of the one shape (LLM rules, detectors, classifiers, and any judge added later, the conversation
judge's findings among them), so a new verdict source just appears, and the conversation score
(low at 5 of 10 or less). They are precomputed per question and check, kept current by triggers
on every table they depend on (labeling/services/outcome_sums.py; a source of another shape is
one more SELECT in its checks_select_sql), so the report reads a few hundred rows however many
calls were rated.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from dataclasses import astuple, dataclass, fields

from django.db.models import (
    Avg,
    Count,
    Exists,
    Max,
    OuterRef,
    QuerySet,
    Sum,
)
from django.utils import timezone

from core import stats as metrics
from core.errors import DomainError
from core.permissions import user_can
from evals.catalog.models import Agent, AgentVersion, Transcript
from evals.judging.models import Judge
from labeling.models import (
    BAD_AT_MOST,
    DEFAULT_QUESTION_KEY,
    DEFAULT_QUESTION_TEXT,
    RATING_MAX,
    RATING_MIN,
    IssueRow,
    OutcomeCall,
    OutcomeCheck,
    OutcomeCheckSums,
    OutcomeDaySums,
    OutcomeQuestion,
    OutcomeRating,
)
from labeling.selectors.resolution import sample_weight

# A check needs at least this many rated calls where it fired and where it did not before its
# difference says anything; below that it is "too few calls".
PREDICTOR_MIN_CALLS = 3
PREDICTOR_WORK_MEM_MB = 128
BY_CHOICES = ("week", "day")
BAD_PAGE_SIZE = 50  # bad calls nothing flagged shown at a time


def outcome_questions(*, agent: Agent) -> list[OutcomeQuestion]:
    """Return the agent's active outcome questions in order; with none configured, its default
    question (unsaved until the first rating creates it)."""
    questions = list(OutcomeQuestion.objects.filter(agent=agent, active=True))
    if questions:
        return questions
    existing = OutcomeQuestion.objects.filter(agent=agent, key=DEFAULT_QUESTION_KEY).first()
    return [
        existing
        or OutcomeQuestion(agent=agent, key=DEFAULT_QUESTION_KEY, text=DEFAULT_QUESTION_TEXT)
    ]


def outcome_panel_data(*, reviewer, transcript: Transcript) -> dict:
    """Return the review page's outcome panel: each question with the reviewer's own rating."""
    agent = transcript.agent_version.agent
    questions = outcome_questions(agent=agent)
    mine = {
        r.question_id: r
        for r in OutcomeRating.objects.filter(transcript=transcript, reviewer=reviewer)
    }
    items = []
    for q in questions:
        rating = mine.get(q.pk) if q.pk else None
        form = (
            {"rating": rating.rating, "reason": rating.reason, "key_factor": rating.key_factor}
            if rating
            else {}
        )
        items.append({"question": q, "mine": rating, "form": form, "errors": {}})
    return {
        "items": items,
        "scale": list(range(RATING_MIN, RATING_MAX + 1)),
        "bad_at_most": BAD_AT_MOST,
        "answered": sum(1 for i in items if i["mine"]),
    }


# ---- the rated calls ---------------------------------------------------------------------------


@dataclass
class CallOutcome:
    """One rated call on one question: its mean rating and weight."""

    transcript_id: int
    external_id: str
    version: str
    at: dt.datetime | None
    rating: float
    ratings: int
    weight: float
    outside_sample: bool

    @property
    def bad(self) -> bool:
        return self.rating <= BAD_AT_MOST


def outcome_ratings_visible(*, viewer, transcript: Transcript) -> tuple[QuerySet, bool]:
    """Return (the call's ratings `viewer` may read, whether others' are hidden).

    Double review stays blind: a reviewer reads only their own ratings of a call until they have
    rated it; then, and for those who read the outcome report (view_calibration), everyone's.
    """
    ratings = (
        OutcomeRating.objects.filter(transcript=transcript)
        .select_related("question", "reviewer")
        .order_by("question__position", "rating")
    )
    if user_can(viewer, "view_calibration") or ratings.filter(reviewer=viewer).exists():
        return ratings, False
    return ratings.filter(reviewer=viewer), ratings.exclude(reviewer=viewer).exists()


def outcome_agent(name: str | None) -> Agent:
    """Return the agent named (or the only one there is); DomainError naming the field."""
    if name:
        agent = Agent.objects.filter(name=name).first()
        if agent is None:
            known = ", ".join(Agent.objects.values_list("name", flat=True)[:20]) or "none yet"
            raise DomainError(errors={"agent": f"no agent named {name!r} (known: {known})."})
        return agent
    agents = list(Agent.objects.all()[:2])
    if len(agents) != 1:
        raise DomainError(errors={"agent": "required: name the agent."})
    return agents[0]


def outcome_question(*, agent: Agent, key: str | None) -> OutcomeQuestion:
    """Return the agent's question with this key (default: its first); unsaved when unrated."""
    if not key:
        return outcome_questions(agent=agent)[0]
    question = OutcomeQuestion.objects.filter(agent=agent, key=key).first()
    if question is None:
        if key == DEFAULT_QUESTION_KEY:
            return outcome_questions(agent=agent)[0]
        raise DomainError(errors={"question": f"{agent.name} has no outcome question {key!r}."})
    return question


def call_outcomes(*, question: OutcomeQuestion) -> list[CallOutcome]:
    """Return every call rated on the question, with its mean rating and weight (one query)."""
    if question.pk is None:
        return []
    rows = (
        OutcomeRating.objects.filter(question=question)
        .values(
            "transcript_id",
            "transcript__external_id",
            "transcript__agent_version__version",
            "transcript__started_at",
            "transcript__imported_at",
        )
        .annotate(
            mean=Avg("rating"),
            n=Count("id"),
            p=Max("assignment__item__inclusion_probability"),
        )
        .order_by("transcript_id")
    )
    return [
        CallOutcome(
            transcript_id=r["transcript_id"],
            external_id=r["transcript__external_id"],
            version=r["transcript__agent_version__version"],
            at=r["transcript__started_at"] or r["transcript__imported_at"],
            rating=float(r["mean"]),
            ratings=r["n"],
            weight=sample_weight(r["p"]),
            outside_sample=r["p"] is None,
        )
        for r in rows
    ]


# ---- figures per agent version and week --------------------------------------------------------


def _r(x: float | None, places: int = 3) -> float | None:
    return None if x is None else round(x, places)


def _clip(ci) -> list[float] | None:
    if ci is None:
        return None
    return [round(max(RATING_MIN, ci[0]), 3), round(min(RATING_MAX, ci[1]), 3)]


def _period(at: dt.datetime | None, by: str) -> dt.date | None:
    if at is None:
        return None
    day = timezone.localtime(at).date() if timezone.is_aware(at) else at.date()
    return day - dt.timedelta(days=day.weekday()) if by == "week" else day


@dataclass
class OutcomeSums:
    """What the figures of a set of rated calls need, addable: OutcomeDaySums' columns."""

    n: int = 0
    ratings: int = 0
    outside: int = 0
    bad: int = 0
    sx: float = 0.0
    w: float = 0.0
    wx: float = 0.0
    w2: float = 0.0
    w2x: float = 0.0
    w2x2: float = 0.0
    wbad: float = 0.0
    w2bad: float = 0.0

    def __add__(self, other: OutcomeSums) -> OutcomeSums:
        return OutcomeSums(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    @classmethod
    def of(cls, c: CallOutcome) -> OutcomeSums:
        w, x = c.weight, c.rating
        bad = 1 if c.bad else 0
        return cls(
            1, c.ratings, int(c.outside_sample), bad, x, w, w * x, w * w, w * w * x,
            w * w * x * x, w * bad, w * w * bad,
        )  # fmt: skip


SUM_FIELDS = [f.name for f in fields(OutcomeSums)]


def _summary_of(s: OutcomeSums) -> dict:
    mean = metrics.weighted_mean_of_sums(metrics.WeightedSums(s.n, s.w, s.wx, s.w2, s.w2x, s.w2x2))
    bad = metrics.weighted_estimate(s.wbad, s.w - s.wbad, s.w2bad, s.w2 - s.w2bad)
    return {
        "calls": s.n,
        "ratings": s.ratings,
        "outside_sample": s.outside,
        "mean": _r(mean.value),
        "mean_ci": _clip(mean.ci),
        "raw_mean": _r(s.sx / s.n) if s.n else None,
        "bad": s.bad,
        "bad_share": _r(bad.value, 4),
        "bad_share_ci": None if bad.ci is None else [round(bad.ci[0], 4), round(bad.ci[1], 4)],
        "effective_n": round(mean.effective_n, 1),
    }


def outcome_summary(calls: list[CallOutcome]) -> dict:
    """Return the weighted figures of a set of rated calls: mean rating with its interval, the
    share of bad outcomes with its Wilson interval, raw counts beside them."""
    return _summary_of(sum((OutcomeSums.of(c) for c in calls), OutcomeSums()))


def _figures_of(days: dict[tuple[str, dt.date | None], OutcomeSums], by: str) -> dict:
    """The figures per version and per version and period from the sums per version and day."""
    if by not in BY_CHOICES:
        raise DomainError(errors={"by": f"expected week or day, got {by!r}."})
    per_version: dict[str, OutcomeSums] = defaultdict(OutcomeSums)
    per_period: dict[tuple[str, dt.date], OutcomeSums] = defaultdict(OutcomeSums)
    overall = OutcomeSums()
    for (version, day), s in sorted(
        days.items(), key=lambda kv: (kv[0][0], kv[0][1] or dt.date.min)
    ):
        per_version[version] += s
        overall += s
        if day is not None:
            start = day - dt.timedelta(days=day.weekday()) if by == "week" else day
            per_period[(version, start)] += s
    return {
        "overall": _summary_of(overall),
        "versions": [{"version": v, **_summary_of(per_version[v])} for v in sorted(per_version)],
        "trend": [
            {"version": v, "period": start.isoformat(), **_summary_of(per_period[(v, start)])}
            for v, start in sorted(per_period, key=lambda k: (k[1], k[0]))
        ],
    }


def outcome_figures(calls: list[CallOutcome], *, by: str = "week") -> dict:
    """Return the figures per agent version (all periods), and per agent version and period
    (week of the calls' start, its Monday, or day), oldest first, of these calls (the
    straightforward recompute of outcome_figures_stored)."""
    days: dict[tuple[str, dt.date | None], OutcomeSums] = defaultdict(OutcomeSums)
    for c in calls:
        days[(c.version, _period(c.at, "day"))] += OutcomeSums.of(c)
    return _figures_of(days, by)


def outcome_figures_stored(*, question: OutcomeQuestion, by: str = "week") -> dict:
    """outcome_figures of every call rated on the question, from the sums per agent version and
    day the outcome triggers keep (labeling/services/outcome_sums.py): one row per version and
    day however many calls were rated. With `overall`, the figures of them all."""
    if question.pk is None:
        return _figures_of({}, by)
    rows = list(
        OutcomeDaySums.objects.filter(question_id=question.pk).values_list(
            "agent_version_id", "day", *SUM_FIELDS
        )
    )
    names = dict(
        AgentVersion.objects.filter(pk__in={r[0] for r in rows}).values_list("pk", "version")
    )
    days: dict[tuple[str, dt.date | None], OutcomeSums] = defaultdict(OutcomeSums)
    for version_id, day, *sums in rows:
        days[(names[version_id], day)] += OutcomeSums(*sums)
    return _figures_of(days, by)


# ---- what predicts the outcome -----------------------------------------------------------------

# The checks are kept per rated call in OutcomeCheck and summed per question, check and side in
# OutcomeCheckSums, by triggers (labeling/services/outcome_sums.py, whose checks_select_sql says
# what a check is): every verdict of the one shape per (judge kind, rule), fired when any of its
# non-errored verdicts on the call was flagged, and each conversation judge's score.
SOURCE_LABELS = {**dict(Judge.Kind.choices), "conversation": "conversation judge"}
# The conversation judge's 1-10 score counts as a check that fired at this score or below.
CONVERSATION_SCORE_LOW = 5
ANY_CHECK = "*"  # OutcomeCheck's row per call: any non-errored verdict flagged on it


def _check_label(src: str, chk: str) -> str:
    return f"{chk} score ≤ {CONVERSATION_SCORE_LOW}" if src == "conversation" else chk


def outcome_predictors(*, question: OutcomeQuestion) -> list[dict]:
    """Return, per check of every predictor source, the weighted mean outcome of the rated calls
    where it fired against those where it did not, and the difference with its 95% interval.

    `worth_a_look`: the check has enough calls on both sides and its interval covers 0, so on
    this evidence it does not move the outcome; a check that never fired on a rated call is
    marked `never_fired`. Largest differences first.
    """
    if question.pk is None:
        return []
    sides: dict[tuple[str, str], dict[bool, metrics.WeightedSums]] = defaultdict(dict)
    bad_fired: dict[tuple[str, str], int] = defaultdict(int)
    rows = (
        OutcomeCheckSums.objects.filter(question_id=question.pk, n__gt=0)
        .exclude(src=ANY_CHECK)
        .values_list("src", "chk", "fired", "n", "w", "wx", "w2", "w2x", "w2x2", "bad")
    )
    for src, chk, fired, n, w, wx, w2, w2x, w2x2, bad in rows:
        sides[(src, chk)][bool(fired)] = metrics.WeightedSums(n, w, wx, w2, w2x, w2x2)
        if fired:
            bad_fired[(src, chk)] = bad
    out = []
    for (src, chk), by in sides.items():
        fired = metrics.weighted_mean_of_sums(by.get(True, metrics.WeightedSums()))
        clean = metrics.weighted_mean_of_sums(by.get(False, metrics.WeightedSums()))
        diff = metrics.mean_difference(fired, clean)
        enough = min(fired.n, clean.n) >= PREDICTOR_MIN_CALLS
        covers_zero = diff.ci is not None and diff.ci[0] <= 0 <= diff.ci[1]
        out.append(
            {
                "source": SOURCE_LABELS.get(src, src),
                "check": _check_label(src, chk),
                "fired": _mean_dict(fired),
                "not_fired": _mean_dict(clean),
                "difference": _r(diff.value),
                "difference_ci": None
                if diff.ci is None
                else [round(diff.ci[0], 3), round(diff.ci[1], 3)],
                "enough_calls": enough,
                "never_fired": fired.n == 0,
                "worth_a_look": (enough and covers_zero) or fired.n == 0,
                "bad_fired": bad_fired[(src, chk)],
            }
        )
    out.sort(
        key=lambda r: (
            r["difference"] is None,
            -(abs(r["difference"]) if r["difference"] is not None else 0),
            r["check"],
        )
    )
    return out


def _mean_dict(m: metrics.Mean) -> dict:
    return {"mean": _r(m.value), "mean_ci": _clip(m.ci), "calls": m.n}


# ---- bad outcomes nothing flagged --------------------------------------------------------------


def _flagged_bad(question: OutcomeQuestion) -> QuerySet:
    """The ids of the calls rated bad on the question on which some check flagged something."""
    return OutcomeCheck.objects.filter(
        question_id=question.pk, src=ANY_CHECK, fired=1, x__lte=BAD_AT_MOST
    ).values("transcript_id")


def _bad_unflagged_in_order(question: OutcomeQuestion) -> QuerySet:
    """The calls rated bad on the question that nothing flagged, the worst (exact mean) first,
    then by external id: a range of OutcomeCall's partial index outcome_call_bad, in order."""
    return OutcomeCall.objects.filter(
        question_id=question.pk, x__lte=BAD_AT_MOST, flagged=0
    ).order_by("x", "external_id")


def _bad_unflagged_count(question: OutcomeQuestion) -> int:
    """How many calls `_bad_unflagged_in_order` lists, from the sums the triggers keep: the bad
    calls of every version and day less the bad ones some check flagged (no bad call is read)."""
    bad = OutcomeDaySums.objects.filter(question_id=question.pk).aggregate(n=Sum("bad"))["n"]
    flagged = OutcomeCheckSums.objects.filter(
        question_id=question.pk, src=ANY_CHECK, fired=1
    ).aggregate(n=Sum("bad"))["n"]
    return (bad or 0) - (flagged or 0)


def _issue_rows_of(transcript_ids: list[int]) -> dict[int, int]:
    """How many issue rows each of these calls has (those with none left out)."""
    if not transcript_ids:
        return {}
    return dict(
        IssueRow.objects.filter(transcript_id__in=transcript_ids)
        .values("transcript_id")
        .annotate(n=Count("id"))
        .values_list("transcript_id", "n")
    )


def _bad_unflagged_slice(
    question: OutcomeQuestion, start: int, stop: int | None
) -> list[tuple[CallOutcome, int]]:
    """Rows start to stop of the report's order, as (call, issue rows): first the calls with no
    issue row (A: the index range in order, skipping those with one, so a page reads about a
    page of rows), then those with some (B: few, the issue rows' calls). B is read only by a
    page that reaches past A's end; A's length is then the count less B's."""
    ordered = _bad_unflagged_in_order(question)
    has_rows = Exists(IssueRow.objects.filter(transcript_id=OuterRef("transcript_id")))
    columns = ("transcript_id", "external_id", "x", "ratings", "w", "outside")
    rows = list(ordered.filter(~has_rows).values_list(*columns)[start:stop])
    with_rows = []
    if stop is None or len(rows) < stop - start:  # A ends on this page or before it
        if rows or not start:
            a_len = start + len(rows)
        else:
            a_len = _bad_unflagged_count(question) - ordered.filter(has_rows).count()
        b_start = max(0, start - a_len)
        b_stop = None if stop is None else max(b_start, stop - a_len)
        with_rows = list(ordered.filter(has_rows).values_list(*columns)[b_start:b_stop])
    issues = _issue_rows_of([r[0] for r in with_rows])
    rows += with_rows
    calls = {
        pk: (version, started or imported)
        for pk, version, started, imported in Transcript.objects.filter(
            pk__in=[r[0] for r in rows]
        ).values_list("pk", "agent_version__version", "started_at", "imported_at")
    }
    return [
        (
            CallOutcome(
                transcript_id=tid,
                external_id=ext,
                version=calls[tid][0],
                at=calls[tid][1],
                rating=x,
                ratings=ratings,
                weight=w,
                outside_sample=bool(outside),
            ),
            issues.get(tid, 0),
        )
        for tid, ext, x, ratings, w, outside in rows
    ]


def _bad_unflagged_ordered(
    calls: list[CallOutcome] | None, question: OutcomeQuestion
) -> list[tuple[CallOutcome, int]]:
    """The bad calls nothing flagged with their issue rows, in the report's order: no issue row
    yet first, then the worst (by the exact mean rating), then by external id."""
    if question.pk is None:
        return []
    if calls is None:
        return _bad_unflagged_slice(question, 0, None)
    flagged = set(_flagged_bad(question).values_list("transcript_id", flat=True))
    bad = {c.transcript_id: c for c in calls if c.bad and c.transcript_id not in flagged}
    rows = _issue_rows_of(list(bad))
    ordered = [(c, rows.get(tid, 0)) for tid, c in bad.items()]
    ordered.sort(key=lambda ci: (ci[1] > 0, ci[0].rating, ci[0].external_id))
    return ordered


def _bad_unflagged_rows(
    ordered: list[tuple[CallOutcome, int]], question: OutcomeQuestion
) -> list[dict]:
    """The report's rows of these bad calls, with what their reviewers said."""
    if not ordered:  # none, or a question nobody answered yet (unsaved)
        return []
    said = defaultdict(list)
    for tid, rating, reason, key_factor, who in (
        OutcomeRating.objects.filter(
            question=question, transcript_id__in=[c.transcript_id for c, _ in ordered]
        )
        .order_by("transcript_id", "rating", "pk")
        .values_list("transcript_id", "rating", "reason", "key_factor", "reviewer__username")
    ):
        said[tid].append(
            {"rating": rating, "reason": reason, "key_factor": key_factor, "reviewer": who}
        )
    return [
        {
            "transcript": c.external_id,
            "version": c.version,
            "started_at": c.at.isoformat() if c.at else None,
            "rating": _r(c.rating, 2),
            "issue_rows": issue_rows,
            "ratings": said[c.transcript_id],
        }
        for c, issue_rows in ordered
    ]


def outcome_bad_unflagged(
    calls: list[CallOutcome] | None = None, *, question: OutcomeQuestion
) -> list[dict]:
    """Return the calls rated bad (mean at most BAD_AT_MOST) on which no check flagged anything:
    failures no rule names yet. Calls with no issue row yet first, then the worst (by the exact
    mean rating), then by external id. `calls`: the rated calls (call_outcomes), else the bad
    ones are read from OutcomeCall."""
    if question.pk is None:
        return []
    return _bad_unflagged_rows(_bad_unflagged_ordered(calls, question), question)


def _bad_page(question: OutcomeQuestion, page_param) -> dict:
    """One page (BAD_PAGE_SIZE) of the bad calls nothing flagged, with their number and pages."""
    total = _bad_unflagged_count(question) if question.pk is not None else 0
    pages = max(1, math.ceil(total / BAD_PAGE_SIZE))
    try:
        page = min(max(1, int(page_param or 1)), pages)
    except ValueError:
        raise DomainError(errors={"bad_page": f"expected a page number, got {page_param!r}."})
    start = (page - 1) * BAD_PAGE_SIZE
    ordered = _bad_unflagged_slice(question, start, start + BAD_PAGE_SIZE) if total else []
    return {
        "bad_unflagged": _bad_unflagged_rows(ordered, question),
        "bad_unflagged_total": total,
        "bad_page": page,
        "bad_pages": pages,
    }


# ---- everything, for the page, the API and the command -----------------------------------------


def outcome_data(params) -> dict:
    """Return the outcome report of one agent and question: figures per version and period,
    predictors and the bad calls nothing flagged, a page of BAD_PAGE_SIZE at a time. params:
    agent, question, by (week or day), bad_page (from 1)."""
    agent = outcome_agent((params.get("agent") or "").strip() or None)
    question = outcome_question(agent=agent, key=(params.get("question") or "").strip() or None)
    by = (params.get("by") or "week").strip()
    figures = outcome_figures_stored(question=question, by=by)
    return {
        "agent": agent.name,
        "question": question.key,
        "question_text": question.text,
        "by": by,
        "scale": [RATING_MIN, RATING_MAX],
        "bad_at_most": BAD_AT_MOST,
        "overall": figures["overall"],
        "versions": figures["versions"],
        "trend": figures["trend"],
        "predictors": outcome_predictors(question=question),
        **_bad_page(question, params.get("bad_page")),
    }
