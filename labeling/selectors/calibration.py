"""Reads for calibration: per (rule version, judge)
confusion counts, figures, trend and disagreements.

How a verdict counts
--------------------
A verdict's truth is its lead's settlement when there is one, else the majority of its marks;
a tie counts for nothing ("waiting") until a lead settles it. Errored verdicts (nothing to mark)
are counted apart, from the verdicts themselves; their call's truth is what the marks on the same
call's other verdicts of the rule version say (labeling.selectors.resolution). Precision and recall
leave them out; the agreement figures (accuracy, F1, specificity, judge kappa) leave them out too,
or, with errors="as_wrong", count each one whose truth is settled as a wrong answer, the way papers
on LLM judges count an unparseable answer. Each verdict weighs 1 / p, p being the largest inclusion
probability of the sample items its marks came through (the likeliest way it got into review);
a verdict marked only outside the sample weighs 1 and is counted as `outside_sample`.
Agreement pairs the first and the last mark (by mark id) of each verdict marked more than once:
the "first reviewer" and "second reviewer" of Cohen's kappa.

The page's counts come from one SQL aggregate (`_aggregate_sql`) over the verdict tally
(labeling.models.VerdictTally): one row per marked verdict, already resolved to its cell, pair,
weight and outside flag by database triggers whenever a mark, settlement or sample item changes
(labeling/services/tally.py). Summing it per (rule version, judge) is one index-only scan. The
same resolution straight from the marks (`_marks_aggregate_sql`, marks grouped per verdict in a
subquery) stays for the per-verdict reads below and as the tally's reference; both are portable
between PostgreSQL and SQLite.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
)

from core import stats as metrics
from core.errors import DomainError
from core.sql import aggregate_tune
from evals.judging.models import Judge, Verdict
from evals.rules.models import Rule, RuleVersion
from labeling.models import Settlement, TallyCell, VerdictTally, split_q
from labeling.selectors.judge_pairs import judge_pairs_attach
from labeling.selectors.resolution import TABLES, errored_verdicts_sql, resolved_verdicts_sql

CELLS = ("tp", "fp", "fn", "tn")
CELL_LABELS = {
    "tp": "true positives",
    "fp": "false positives",
    "fn": "false negatives",
    "tn": "true negatives",
    "waiting": "waiting for a lead (tied)",
    "errored": "errored",
}

# The cell code k of a resolved verdict, and its agreement pair code q (0: not paired).
K_CELLS = {0: "fn", 1: "tn", 2: "fp", 3: "tp", 4: "waiting", 5: "errored"}
ERRORED = 5
Q_PAIRS = {1: (0, 0), 2: (0, 1), 3: (1, 0), 4: (1, 1)}


_TALLY = VerdictTally._meta.db_table


def _aggregate_sql(where: str) -> str:
    """Return the page's one aggregate, over the tally cells (alias t; labeling.services.
    tally_cells): per (rule version, judge, cell, pair, outside) counts and weights, the sums of
    the few delta rows each cell has."""
    return f"""
SELECT t.rule_version_id, t.judge_id, t.cell, t.pair, t.outside, SUM(t.n) AS c,
       SUM(t.w) AS sw, SUM(t.w2) AS sw2
FROM {TallyCell._meta.db_table} t
{where}
GROUP BY t.rule_version_id, t.judge_id, t.cell, t.pair, t.outside
HAVING SUM(t.n) <> 0
"""


def _marks_aggregate_sql(where: str) -> str:
    """Return the same aggregate computed from the marks themselves (the tally's reference).

    Grouping by a small cell code keeps the outer aggregate to three plain sums per row (instead of
    a FILTER per figure); Python pivots the few thousand result rows.
    """
    resolved = resolved_verdicts_sql(where)
    return f"""
SELECT rule_version_id, judge_id, k, q, o, COUNT(*) AS c, SUM(w) AS sw, SUM(w * w) AS sw2
FROM (
  SELECT rule_version_id, judge_id, w, o,
         CASE WHEN e = 1 THEN 5 WHEN t IS NULL THEN 4 ELSE f * 2 + t END AS k,
         CASE WHEN e = 0 AND n >= 2 THEN 1 + fc * 2 + lc ELSE 0 END AS q
  FROM ({resolved}) x
) y
GROUP BY rule_version_id, judge_id, k, q, o
"""


def _errored_aggregate_sql(joins: str, conds: str) -> str:
    """Return, per (rule version, judge), the errored verdicts by their call's truth b (1 broken,
    0 not, NULL unsettled): how many, and the sums of their weights and squared weights."""
    return f"""
SELECT rule_version_id, judge_id, b, COUNT(*) AS c, SUM(w) AS sw, SUM(w * w) AS sw2
FROM ({errored_verdicts_sql(joins, conds)}) x
GROUP BY rule_version_id, judge_id, b
"""


def _filter_parts(
    *, judge_ids=None, group=None, status=None, rule_version_ids=None, safety=None, alias: str = "v"
) -> tuple[str, list[str], list]:
    """Return the joins, the conditions and the parameters that limit verdicts (or tally rows:
    alias t) to those passing the filters."""
    conds, params = [], []
    if judge_ids is not None:
        conds.append(f"{alias}.judge_id IN ({', '.join(['%s'] * len(judge_ids)) or 'NULL'})")
        params += list(judge_ids)
    if rule_version_ids is not None:
        conds.append(
            f"{alias}.rule_version_id IN ({', '.join(['%s'] * len(rule_version_ids)) or 'NULL'})"
        )
        params += list(rule_version_ids)
    if status:
        conds.append("rv.status = %s")
        params.append(status)
    if group:
        conds.append('r."group" = %s')
        params.append(group)
    if safety is not None:
        conds.append("r.safety = %s")
        params.append(bool(safety))
    # Filters sit on the verdicts themselves, so PostgreSQL reaches the marks of a few rule versions
    # through the (rule_version, judge) and mark.verdict_id indexes.
    joins = ""
    if status or group or safety is not None:
        joins = (
            f"JOIN {TABLES['rv']} rv ON rv.id = {alias}.rule_version_id "
            f"JOIN {TABLES['rule']} r ON r.id = rv.rule_id "
        )
    return joins, conds, params


def _where(**filters) -> tuple[str, list]:
    """Return a WHERE clause limiting marks to verdicts (or tally
    rows: alias t) that pass the filters, and its parameters."""
    joins, conds, params = _filter_parts(**filters)
    if not conds:
        return "", []
    return joins + "WHERE " + " AND ".join(conds), params


@dataclass
class Counts:
    """Confusion counts (raw and weighted) and agreement pairs of a set of verdicts."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    waiting: int = 0
    errored: int = 0
    outside_sample: int = 0
    w: dict = field(default_factory=lambda: dict.fromkeys(CELLS, 0.0))
    w2: dict = field(default_factory=lambda: dict.fromkeys(CELLS, 0.0))
    pairs: metrics.AgreementTable = field(default_factory=metrics.AgreementTable)
    # Errored verdicts whose call's truth is settled: as wrong answers they would be false
    # negatives (the rule was broken) or false positives (it was not); with their weights.
    errored_fn: int = 0
    errored_fp: int = 0
    errored_w: dict = field(default_factory=lambda: {"fn": 0.0, "fp": 0.0})
    errored_w2: dict = field(default_factory=lambda: {"fn": 0.0, "fp": 0.0})

    @property
    def marked(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def errored_covered(self) -> int:
        """Errored verdicts whose truth the humans settled (on the call's other verdicts)."""
        return self.errored_fn + self.errored_fp

    def add_errored(self, b, count: int, sum_w: float, sum_w2: float) -> None:
        """Add one group of the errored aggregate (b: the call's truth, 1 broken, 0 not, None)."""
        self.errored += count
        if b is None:
            return
        cell = "fn" if int(b) else "fp"
        setattr(self, f"errored_{cell}", getattr(self, f"errored_{cell}") + count)
        self.errored_w[cell] += float(sum_w or 0)
        self.errored_w2[cell] += float(sum_w2 or 0)

    def confusions(self, errors: str = metrics.ERRORS_EXCLUDE):
        """Return the raw and the weighted confusion the agreement figures count: the marked
        verdicts, and with errors="as_wrong" the errored ones whose truth is settled, as wrong."""
        w, w2 = self.w, self.w2
        raw = metrics.Confusion(self.tp, self.fp, self.fn, self.tn)
        weighted = metrics.Confusion(
            w["tp"], w["fp"], w["fn"], w["tn"], sq=(w2["tp"], w2["fp"], w2["fn"], w2["tn"])
        )
        if metrics.answer(None, True, errors) is not None:  # errored answers count as wrong
            ew, ew2 = self.errored_w, self.errored_w2
            raw = raw + metrics.Confusion(fp=self.errored_fp, fn=self.errored_fn)
            weighted = weighted + metrics.Confusion(
                fp=ew["fp"], fn=ew["fn"], sq=(0.0, ew2["fp"], ew2["fn"], 0.0)
            )
        return raw, weighted

    def add_group(self, k: int, q: int, o: int, count: int, sum_w: float, sum_w2: float) -> None:
        """Add one group of the SQL aggregate (cell code k, pair code q, outside flag o)."""
        cell = K_CELLS[k]
        if q:
            first, last = Q_PAIRS[q]
            self.pairs = self.pairs + metrics.AgreementTable(
                count * (first and last),
                count * (first and not last),
                count * (not first and last),
                count * (not first and not last),
            )
        if cell in CELLS:
            setattr(self, cell, getattr(self, cell) + count)
            self.w[cell] += float(sum_w or 0)
            self.w2[cell] += float(sum_w2 or 0)
            self.outside_sample += count if o else 0
        elif cell == "waiting":
            self.waiting += count
        # An errored verdict's marks (made before it could not be marked) count for nothing:
        # errored verdicts are counted from the verdicts themselves (add_errored).

    def add_verdict(self, v: VerdictOutcome) -> None:
        """Count one resolved verdict (the Python twin of the SQL aggregate)."""
        if v.errored:
            self.errored += 1
            return
        if v.pair is not None:
            self.pairs = self.pairs + metrics.AgreementTable(
                int(v.pair == (1, 1)),
                int(v.pair == (1, 0)),
                int(v.pair == (0, 1)),
                int(v.pair == (0, 0)),
            )
        if v.cell == "waiting":
            self.waiting += 1
            return
        setattr(self, v.cell, getattr(self, v.cell) + 1)
        self.w[v.cell] += v.weight
        self.w2[v.cell] += v.weight * v.weight
        self.outside_sample += int(v.outside_sample)


def _r(x: float | None, places: int = 4) -> float | None:
    return None if x is None else round(x, places)


def _ci(ci) -> list[float] | None:
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def floors_from_settings() -> metrics.Floors:
    """Return the eligibility floors configured in settings."""
    return metrics.Floors(
        min_marks=settings.DOCKET_MIN_MARKS,
        precision=settings.DOCKET_PRECISION_FLOOR,
        recall=settings.DOCKET_RECALL_FLOOR,
        safety_precision=settings.DOCKET_SAFETY_PRECISION_FLOOR,
        safety_recall=settings.DOCKET_SAFETY_RECALL_FLOOR,
    )


@dataclass
class Figures:
    """Every figure derived from a set of counts.

    Precision and recall (the gate's figures) always leave errored verdicts out; the agreement
    figures (accuracy, F1, specificity, judge kappa) count them as `errors` says.
    """

    counts: Counts
    errors: str = metrics.ERRORS_EXCLUDE

    def __post_init__(self):
        c = self.counts
        self.precision = metrics.precision(c.tp, c.fp)
        self.recall = metrics.recall(c.tp, c.fn)
        w, w2 = c.w, c.w2
        self.w_precision = metrics.weighted_estimate(w["tp"], w["fp"], w2["tp"], w2["fp"])
        self.w_recall = metrics.weighted_estimate(w["tp"], w["fn"], w2["tp"], w2["fn"])
        self.effective_n = metrics.kish_effective_n(sum(w.values()), sum(w2.values()))
        raw, weighted = c.confusions(self.errors)
        self.judge = metrics.judge_agreement(raw)
        self.w_judge = metrics.judge_agreement(weighted)
        self.accuracy, self.w_accuracy = self.judge.accuracy, self.w_judge.accuracy
        self.f1, self.w_f1 = self.judge.f1, self.w_judge.f1
        self.specificity, self.w_specificity = self.judge.specificity, self.w_judge.specificity
        self.judge_kappa, self.w_judge_kappa = self.judge.kappa, self.w_judge.kappa
        # Between reviewers (the first and last mark of each verdict marked twice or more).
        self.kappa = metrics.cohen_kappa(c.pairs)
        self.agreement = metrics.percent_agreement(c.pairs)

    def as_dict(self) -> dict:
        c = self.counts
        return {
            "marked": c.marked,
            "tp": c.tp,
            "fp": c.fp,
            "fn": c.fn,
            "tn": c.tn,
            "errors": self.errors,
            "errored": c.errored,
            "errored_covered": c.errored_covered,
            "counted": round(self.judge.n),
            "precision": _r(self.precision.value),
            "precision_ci": _ci(self.precision.ci),
            "recall": _r(self.recall.value),
            "recall_ci": _ci(self.recall.ci),
            "accuracy": _r(self.accuracy.value),
            "accuracy_ci": _ci(self.accuracy.ci),
            "f1": _r(self.f1.value),
            "f1_ci": _ci(self.f1.ci),
            "specificity": _r(self.specificity.value),
            "specificity_ci": _ci(self.specificity.ci),
            "judge_kappa": _r(self.judge_kappa.value),
            "judge_kappa_ci": _ci(self.judge_kappa.ci),
            "weighted": {
                "precision": _r(self.w_precision.value),
                "precision_ci": _ci(self.w_precision.ci),
                "recall": _r(self.w_recall.value),
                "recall_ci": _ci(self.w_recall.ci),
                "accuracy": _r(self.w_accuracy.value),
                "accuracy_ci": _ci(self.w_accuracy.ci),
                "f1": _r(self.w_f1.value),
                "f1_ci": _ci(self.w_f1.ci),
                "specificity": _r(self.w_specificity.value),
                "specificity_ci": _ci(self.w_specificity.ci),
                "judge_kappa": _r(self.w_judge_kappa.value),
                "judge_kappa_ci": _ci(self.w_judge_kappa.ci),
                "effective_n": round(self.effective_n, 1),
                **{c_: round(c.w[c_], 2) for c_ in CELLS},
            },
            "reviewer_kappa": _r(self.kappa),
            "reviewer_agreement": _r(self.agreement),
            "kappa": _r(self.kappa),
            "agreement": _r(self.agreement),
            "pairs": c.pairs.n,
            "waiting": c.waiting,
            "outside_sample": c.outside_sample,
        }


@dataclass
class CalibrationRow:
    """The calibration of one rule version by one judge (judge None: no marks yet)."""

    rule_version: RuleVersion
    judge: Judge | None
    counts: Counts
    floors: metrics.Floors
    errors: str = metrics.ERRORS_EXCLUDE

    def __post_init__(self):
        self.figures = Figures(self.counts, self.errors)
        # Other judges of the same rule version over the same calls (judge_pairs_attach).
        self.other_judges: list = []
        self.why_not = metrics.why_not_eligible(
            marked=self.counts.marked,
            precision_ci=self.figures.precision.ci,
            recall_ci=self.figures.recall.ci,
            safety=self.rule_version.rule.safety,
            floors=self.floors,
        )
        self.eligible = not self.why_not

    @property
    def key(self) -> str:
        return f"{self.rule_version.pk}-{self.judge.pk if self.judge else 0}"

    @property
    def precision_floor(self) -> float:
        """The precision floor for this rule version (safety rules have their own)."""
        f = self.floors
        return f.safety_precision if self.rule_version.rule.safety else f.precision

    @property
    def recall_floor(self) -> float:
        """The recall floor for this rule version (safety rules have their own)."""
        f = self.floors
        return f.safety_recall if self.rule_version.rule.safety else f.recall

    def as_dict(self) -> dict:
        """Return the calibration object of docs/contract.md (plus the agreement figures, errored
        verdicts, the other judges compared and the counts)."""
        rv = self.rule_version
        return {
            "rule": rv.rule.rule_id,
            "version": rv.number,
            "judge": self.judge.name if self.judge else None,
            "status": rv.status,
            "rule_version_id": rv.pk,
            "group": rv.rule.group,
            "safety": rv.rule.safety,
            **self.figures.as_dict(),
            "other_judges": [o.as_dict() for o in self.other_judges],
            "eligible": self.eligible,
            "why_not": self.why_not,
        }


def _judge_ids(judge) -> list[int] | None:
    if judge is None or judge == "":
        return None
    if isinstance(judge, Judge):
        return [judge.pk]
    if isinstance(judge, int):
        return [judge]
    return list(Judge.objects.filter(name=judge).values_list("pk", flat=True))


def calibration_counts(
    *,
    judge=None,
    group: str | None = None,
    status: str | None = None,
    rule_version_ids=None,
    safety=None,
    from_marks: bool = False,
) -> dict[tuple[int, int], Counts]:
    """Return Counts per (rule version id, judge id) from one SQL aggregate over the tally cells
    (`from_marks`: over the marks themselves, slower; the tally's reference), and one over the
    errored verdicts."""
    filters = {
        "judge_ids": _judge_ids(judge),
        "group": group,
        "status": status,
        "rule_version_ids": rule_version_ids,
        "safety": safety,
    }
    where, params = _where(**filters, alias="v" if from_marks else "t")
    sql = _marks_aggregate_sql(where) if from_marks else _aggregate_sql(where)
    joins, conds, e_params = _filter_parts(**filters, alias="e")
    errored_sql = _errored_aggregate_sql(joins, "".join(f" AND {c}" for c in conds))
    counts: dict[tuple[int, int], Counts] = defaultdict(Counts)
    with transaction.atomic(), connection.cursor() as cursor:
        aggregate_tune(cursor)
        cursor.execute(sql, params)
        for rv_id, judge_id, k, q, o, c, sw, sw2 in cursor.fetchall():
            counts[(rv_id, judge_id)].add_group(int(k), int(q), int(o), int(c), sw, sw2)
        cursor.execute(errored_sql, e_params)
        for rv_id, judge_id, b, c, sw, sw2 in cursor.fetchall():
            counts[(rv_id, judge_id)].add_errored(b, int(c), sw, sw2)
    return dict(counts)


def calibration_rows(
    *,
    judge=None,
    group: str | None = None,
    status: str | None = None,
    rule_version_ids=None,
    include_unmarked: bool = True,
    floors: metrics.Floors | None = None,
    errors: str = metrics.ERRORS_EXCLUDE,
) -> list[CalibrationRow]:
    """Return one row per (rule version, judge) with marked or errored verdicts, ordered by rule,
    version and judge; the agreement figures count errored verdicts as `errors` says.

    `judge` is a Judge, its id or its name. With `include_unmarked`, rule versions nobody has
    marked yet (and that are not retired, unless asked for) appear once with judge None, when no
    judge filter is set.
    """
    floors = floors or floors_from_settings()
    aggregates = calibration_counts(
        judge=judge, group=group, status=status, rule_version_ids=rule_version_ids
    )
    rvs = RuleVersion.objects.select_related("rule").in_bulk({rv_id for rv_id, _ in aggregates})
    judges = Judge.objects.in_bulk({judge_id for _, judge_id in aggregates})
    rows = [
        CalibrationRow(rvs[rv_id], judges[judge_id], counts, floors, errors)
        for (rv_id, judge_id), counts in aggregates.items()
    ]
    if include_unmarked and _judge_ids(judge) is None:
        qs = RuleVersion.objects.select_related("rule").exclude(pk__in=rvs.keys())
        qs = qs.filter(status=status) if status else qs.exclude(status=RuleVersion.Status.RETIRED)
        if group:
            qs = qs.filter(rule__group=group)
        if rule_version_ids is not None:
            qs = qs.filter(pk__in=rule_version_ids)
        rows += [CalibrationRow(rv, None, Counts(), floors, errors) for rv in qs]
    rows.sort(
        key=lambda r: (
            r.rule_version.rule.rule_id,
            r.rule_version.number,
            r.judge.name if r.judge else "",
        )
    )
    return rows


def rule_version_ids_eligible(*, rule_version_ids=None) -> set[int]:
    """Return the ids of rule versions eligible for
    the gate by at least one judge (one aggregate)."""
    if rule_version_ids is not None and not rule_version_ids:
        return set()
    rows = calibration_rows(rule_version_ids=rule_version_ids, include_unmarked=False)
    return {r.rule_version.pk for r in rows if r.eligible}


def calibration_row(
    *, rule_version: RuleVersion, judge: Judge | None = None
) -> CalibrationRow | None:
    """Return the row of one rule version for one judge (the most-marked judge when None)."""
    rows = calibration_rows(rule_version_ids=[rule_version.pk], judge=judge, include_unmarked=False)
    if not rows:
        return None
    return max(rows, key=lambda r: (r.counts.marked, -(r.judge.pk if r.judge else 0)))


def calibration_overall(rows: list[CalibrationRow]) -> dict:
    """Return kappa and percent agreement over all the rows' paired verdicts."""
    table = metrics.AgreementTable()
    for r in rows:
        table = table + r.counts.pairs
    return {
        "kappa": metrics.cohen_kappa(table),
        "agreement": metrics.percent_agreement(table),
        "pairs": table.n,
    }


def calibration_judges() -> QuerySet[Judge]:
    """Return the judges that have at least one marked verdict: those in the tally, which holds
    a row for each marked verdict (joining every mark to its verdict took 1.9 s at 4.2M verdicts
    and 71,000 marks; the tally's rows, 15 ms)."""
    return Judge.objects.filter(pk__in=VerdictTally.objects.values("judge_id")).order_by("name")


def calibration_groups() -> list[str]:
    """Return the rule groups, for the filter."""
    return list(Rule.objects.order_by("group").values_list("group", flat=True).distinct())


# ---- one rule version: verdicts behind each cell, trend by week ----


@dataclass(frozen=True)
class VerdictOutcome:
    """How one marked verdict counts."""

    verdict_id: int
    cell: str  # tp fp fn tn waiting errored
    weight: float
    outside_sample: bool
    pair: tuple[int, int] | None
    at: dt.datetime | None

    @property
    def errored(self) -> bool:
        return self.cell == "errored"


def _parse_dt(value) -> dt.datetime | None:
    if value is None or isinstance(value, dt.datetime):
        return value
    from django.utils.dateparse import parse_datetime

    return parse_datetime(str(value))


def verdict_outcomes(
    *, rule_version: RuleVersion, judge: Judge | None = None
) -> list[VerdictOutcome]:
    """Return how each marked verdict of a rule version (and judge) counts, in one query.

    Read from the verdict tally (the marks already resolved per verdict), so it costs the marked
    verdicts of the rule version, not all of its verdicts."""
    where, params = _where(
        judge_ids=_judge_ids(judge), rule_version_ids=[rule_version.pk], alias="t"
    )
    sql = f"""
SELECT t.verdict_id, t.cell, t.weight, t.outside, t.pair, COALESCE(tr.started_at, v.created_at)
FROM {_TALLY} t
JOIN {TABLES["verdict"]} v ON v.id = t.verdict_id
JOIN {TABLES["transcript"]} tr ON tr.id = v.transcript_id
{where}"""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [
            VerdictOutcome(vid, K_CELLS[k], float(w), bool(o), Q_PAIRS.get(q), _parse_dt(at))
            for vid, k, w, o, q, at in cursor.fetchall()
        ]


def calibration_trend(
    *,
    rule_version: RuleVersion,
    judge: Judge | None = None,
    floors: metrics.Floors | None = None,
    by: str = "week",
) -> list[tuple[dt.date, Figures]]:
    """Return the figures per ISO week (its Monday) of the calls' start, or per day with
    by="day", oldest first."""
    if by not in ("week", "day"):
        raise ValueError(f"by: expected week or day, got {by!r}")
    buckets: dict[dt.date, Counts] = defaultdict(Counts)
    for v in verdict_outcomes(rule_version=rule_version, judge=judge):
        if v.at is None:
            continue
        day = v.at.date()
        buckets[day - dt.timedelta(days=day.weekday()) if by == "week" else day].add_verdict(v)
    return [(start, Figures(buckets[start])) for start in sorted(buckets)]


def calibration_cell_verdicts(
    *, rule_version: RuleVersion, judge: Judge | None, cell: str
) -> QuerySet[Verdict]:
    """Return the marked verdicts of one cell (tp, fp, fn, tn, waiting) with their marks, or
    every errored verdict (cell "errored", marked or not)."""
    if cell not in CELL_LABELS:
        raise ValueError(f"cell: expected one of {', '.join(CELL_LABELS)}, got {cell!r}")
    if cell == "errored":
        qs = Verdict.objects.filter(rule_version=rule_version).exclude(error="")
        qs = qs.filter(judge=judge) if judge is not None else qs
    else:  # the tally holds each marked verdict's cell, indexed by rule version, judge, cell
        code = {name: k for k, name in K_CELLS.items()}[cell]
        qs = Verdict.objects.filter(
            tally__rule_version_id=rule_version.pk, tally__cell=code, rule_version=rule_version
        )
        qs = qs.filter(tally__judge_id=judge.pk) if judge is not None else qs
    return (
        qs.select_related("transcript", "judge", "settlement__settled_by")
        .prefetch_related("marks__reviewer")
        .order_by("transcript__external_id")
    )


def disagreements(
    *, only_ties: bool = False, rule_version: RuleVersion | None = None
) -> QuerySet[Verdict]:
    """Return non-errored verdicts whose marks split:
    unsettled ties first, then settled, then splits.

    Each carries n_marks, n_right, n_wrong, tied and settled; page it before touching the marks.
    """
    # The tally holds each marked verdict's marks counted (its partial index verdict_tally_split
    # just the split ones), so the page joins no mark to find them or to count them.
    qs = Verdict.objects.filter(split_q("tally__"), tally__cell__lt=ERRORED)
    if rule_version is not None:
        qs = qs.filter(tally__rule_version_id=rule_version.pk)
    qs = qs.annotate(
        n_marks=F("tally__n_marks"),
        n_right=F("tally__n_right"),
        n_wrong=ExpressionWrapper(
            F("tally__n_marks") - F("tally__n_right"), output_field=IntegerField()
        ),
        tied=ExpressionWrapper(
            Q(tally__n_marks=2 * F("tally__n_right")), output_field=BooleanField()
        ),
        settled=Exists(Settlement.objects.filter(verdict=OuterRef("pk"))),
    )
    if only_ties:
        qs = qs.filter(tied=True)
    return (
        qs.select_related("transcript", "rule_version__rule", "judge", "settlement__settled_by")
        .prefetch_related("marks__reviewer")
        .order_by(
            "settled",
            "-tied",
            "rule_version__rule__rule_id",
            "rule_version__number",
            "transcript__external_id",
        )
    )


def calibration_filters(params) -> dict:
    """Return calibration_rows keyword arguments from
    query parameters (the pages, the API, the command)."""
    status = (params.get("status") or "").strip()
    if status and status not in RuleVersion.Status.values:
        raise DomainError(
            f"status: expected one of {', '.join(RuleVersion.Status.values)}, got {status!r}."
        )
    rule_ids = [r.strip() for r in (params.get("rule") or "").split(",") if r.strip()]
    errors = (params.get("errors") or "").strip() or metrics.ERRORS_EXCLUDE
    if errors not in metrics.ERRORS:
        raise DomainError(f"errors: expected one of {', '.join(metrics.ERRORS)}, got {errors!r}.")
    return {
        "errors": errors,
        "judge": (params.get("judge") or "").strip() or None,
        "group": (params.get("group") or "").strip() or None,
        "status": status or None,
        "rule_version_ids": (
            list(
                RuleVersion.objects.filter(rule__rule_id__in=rule_ids).values_list("pk", flat=True)
            )
            if rule_ids
            else None
        ),
    }


def calibration_data(params) -> list[dict]:
    """Return the calibration objects for these query
    parameters (the API's and the command's JSON)."""
    filters = calibration_filters(params)
    rows = calibration_rows(**filters)
    judge_pairs_attach(rows, errors=filters["errors"])
    return [row.as_dict() for row in rows]
