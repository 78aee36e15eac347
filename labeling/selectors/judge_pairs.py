"""Two judges of one rule version over the same calls: how often they agree, and Cohen's kappa.

Every two judges that both have a calibration row for a rule version (marked or errored verdicts
on it) are compared over every call both judged, marked or not: the judges' own answers need no
truth. Two judges that are one pairwise judge's two prompt orders (Judge.prompt_order: NAME and
NAME@ba) are named so: their agreement is the judge's positional agreement, the share of calls on
which it gives the same answer whichever output it is shown first.

An errored answer counts as core.stats.answer says: with errors="exclude" a call where either judge
errored is left out; with "as_wrong" an errored answer on a call whose truth the humans settled
(labeling.selectors.resolution) is the wrong one, so two judges that both errored there agree, and
an errored answer agrees with the other judge's only when that one is wrong too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db import connection, transaction

from core import stats as metrics
from evals.judging.models import Judge
from labeling.selectors.resolution import TABLES, errored_verdicts_sql

# Per (rule version, judge a, judge b, a's answer, b's answer): calls both judged. A call where
# either answer errored keeps its transcript id (t), so its truth can be looked up; the others
# are grouped. Reached through verdict_rv_judge (a) and verdict_key_unique (b).
_PAIRS = """
SELECT a.rule_version_id, a.judge_id, b.judge_id,
       CASE WHEN a.error <> '' THEN NULL WHEN a.flagged THEN 1 ELSE 0 END AS x,
       CASE WHEN b.error <> '' THEN NULL WHEN b.flagged THEN 1 ELSE 0 END AS y,
       CASE WHEN a.error <> '' OR b.error <> '' THEN a.transcript_id END AS t,
       COUNT(*) AS c
FROM {verdict} a
JOIN {verdict} b ON b.transcript_id = a.transcript_id AND b.rule_version_id = a.rule_version_id
     AND b.judge_id > a.judge_id
WHERE a.rule_version_id IN ({rvs}) AND a.judge_id IN ({judges}) AND b.judge_id IN ({judges})
GROUP BY a.rule_version_id, a.judge_id, b.judge_id, x, y, t
"""


@dataclass(frozen=True)
class OtherJudge:
    """Another judge of the same rule version, compared with a row's judge."""

    judge: Judge
    positional: bool
    figures: metrics.PairAgreement
    errored: int  # calls on which either answer errored (left out, or counted as wrong)

    def as_dict(self) -> dict:
        f = self.figures
        return {
            "judge": self.judge.name,
            "positional": self.positional,
            "calls": f.n,
            "errored": self.errored,
            "agreement": _r(f.agreement.value),
            "agreement_ci": _ci(f.agreement.ci),
            "kappa": _r(f.kappa.value),
            "kappa_ci": _ci(f.kappa.ci),
        }


def _r(x):
    return None if x is None else round(x, 4)


def _ci(ci):
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def _in(values) -> str:
    return ", ".join(["%s"] * len(values))


def judge_pair_tables(
    judges_of: dict[int, set[int]], *, errors: str = metrics.ERRORS_EXCLUDE
) -> dict[tuple[int, int, int], tuple[metrics.AgreementTable, int]]:
    """Return, per (rule version, judge a, judge b) with a < b among `judges_of[rule version]`,
    the two judges' AgreementTable over the calls both judged ("right" reads "flagged") and how
    many of those calls had an errored answer."""
    judges_of = {rv: js for rv, js in judges_of.items() if len(js) >= 2}
    if not judges_of:
        return {}
    rvs = sorted(judges_of)
    judges = sorted(set().union(*judges_of.values()))
    sql = _PAIRS.format(rvs=_in(rvs), judges=_in(judges), **TABLES)
    grouped: dict[tuple[int, int, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    errored_rows: list[tuple[int, int, int, bool | None, bool | None, int, int]] = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [*rvs, *judges, *judges])
        for rv, a, b, x, y, t, c in cursor.fetchall():
            if a not in judges_of[rv] or b not in judges_of[rv]:
                continue
            if t is None:
                grouped[(rv, a, b)][(0 if x else 2) + (0 if y else 1)] += c
            else:
                x = None if x is None else bool(x)
                y = None if y is None else bool(y)
                errored_rows.append((rv, a, b, x, y, t, c))
        truth: dict[tuple[int, int], bool | None] = {}
        if errored_rows and errors != metrics.ERRORS_EXCLUDE:
            cursor.execute(
                f"SELECT transcript_id, rule_version_id, b FROM "
                f"({errored_verdicts_sql(conds=f' AND e.rule_version_id IN ({_in(rvs)})')}) x",
                rvs,
            )
            for t, rv, b in cursor.fetchall():
                truth[(t, rv)] = None if b is None else bool(b)
    out: dict[tuple[int, int, int], tuple[metrics.AgreementTable, int]] = {}
    for key, cells in grouped.items():
        out[key] = (metrics.AgreementTable(*cells), 0)
    for rv, a, b, x, y, t, c in errored_rows:
        table, errored = out.get((rv, a, b), (metrics.AgreementTable(), 0))
        extra = metrics.pair_table_from_rows([(x, y, truth.get((t, rv)))] * c, errors=errors)
        out[(rv, a, b)] = (table + extra, errored + c)
    return out


def judge_pairs_attach(rows, *, errors: str = metrics.ERRORS_EXCLUDE) -> None:
    """Set each calibration row's `other_judges`: every other judge with a row for the same rule
    version, compared with this row's judge over the calls both judged (positional pairs first)."""
    judges_of: dict[int, set[int]] = defaultdict(set)
    by_key = {}
    for row in rows:
        if row.judge is not None:
            judges_of[row.rule_version.pk].add(row.judge.pk)
            by_key[(row.rule_version.pk, row.judge.pk)] = row
    for (rv, a, b), (table, errored) in judge_pair_tables(judges_of, errors=errors).items():
        ra, rb = by_key[(rv, a)], by_key[(rv, b)]
        base_a, order_a = ra.judge.prompt_order
        base_b, order_b = rb.judge.prompt_order
        positional = base_a == base_b and order_a != order_b
        figures = metrics.pair_agreement(table)
        ra.other_judges.append(OtherJudge(rb.judge, positional, figures, errored))
        transposed = metrics.AgreementTable(
            table.both_right, table.second_right, table.first_right, table.both_wrong
        )
        rb.other_judges.append(
            OtherJudge(ra.judge, positional, metrics.pair_agreement(transposed), errored)
        )
    for row in by_key.values():
        row.other_judges.sort(key=lambda o: (not o.positional, o.judge.name))
