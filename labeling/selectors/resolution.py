"""How a marked verdict resolves, as SQL: one home for the calibration selector and the tally.

Per verdict: its truth (the lead's settlement, else the majority of its marks; a tie waits), its
weight (1 / the largest inclusion probability of its marks' sample items; 1 outside the sample),
whether it is errored, and its first and last mark. The calibration selector reads it straight
from the marks; the verdict tally's triggers (labeling/services/tally.py) store it per verdict.

An errored verdict has no answer to mark: its truth is its call's, read from the tally rows of the
other verdicts (other judges) of the same call and rule version (`errored_verdicts_sql`).
Portable between PostgreSQL and SQLite.
"""

from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from evals.rules.models import Rule, RuleVersion
from labeling.models import Assignment, Mark, SampleItem, Settlement, VerdictTally

TABLES = {
    "mark": Mark._meta.db_table,
    "assignment": Assignment._meta.db_table,
    "item": SampleItem._meta.db_table,
    "settlement": Settlement._meta.db_table,
    "verdict": Verdict._meta.db_table,
    "rv": RuleVersion._meta.db_table,
    "rule": Rule._meta.db_table,
    "transcript": Transcript._meta.db_table,
    "tally": VerdictTally._meta.db_table,
}


def weight_sql(p: str) -> str:
    """Return the SQL weight of something reviewed through the sample: 1 / p, p its largest
    inclusion probability (the SQL column or expression given); 1 when it came in outside the
    sample (p NULL). `1 / p` stays a float (a NUMERIC 1.0 would make every sum slow on
    PostgreSQL). sample_weight is its Python twin: verdicts and outcome ratings weigh alike."""
    return f"COALESCE(1 / {p}, 1)"


def sample_weight(p: float | None) -> float:
    """Return the weight of something reviewed through the sample with largest inclusion
    probability p (1 outside the sample, p None): the Python twin of weight_sql."""
    return 1.0 if p is None else 1.0 / p


# Per verdict: its rule version, judge, flagged (f) and errored (e), how many marks, how many said
# right, the largest inclusion probability, and the first and last mark packed as id * 2 + correct
# (so MIN/MAX also carry that mark's answer). Grouped by the verdict's primary key, so its other
# columns may be selected (PostgreSQL: functional dependency; SQLite: bare columns).
_PER_VERDICT = """
SELECT v.id AS verdict_id, v.rule_version_id AS rule_version_id, v.judge_id AS judge_id,{pv_extra}
       CASE WHEN v.flagged THEN 1 ELSE 0 END AS f,
       CASE WHEN v.error <> '' THEN 1 ELSE 0 END AS e,
       COUNT(*) AS n,
       SUM(CASE WHEN m.correct THEN 1 ELSE 0 END) AS r,
       MAX(si.inclusion_probability) AS p,
       MIN(m.id * 2 + CASE WHEN m.correct THEN 1 ELSE 0 END) AS fc,
       MAX(m.id * 2 + CASE WHEN m.correct THEN 1 ELSE 0 END) AS lc
FROM {verdict} v
JOIN {mark} m ON m.verdict_id = v.id
LEFT JOIN {assignment} a ON a.id = m.assignment_id
LEFT JOIN {item} si ON si.id = a.item_id
{where}
GROUP BY v.id
"""

# Per verdict, resolved: t truth (1 right, 0 wrong, NULL tied), w weight, o outside the sample.
_RESOLVED = """
SELECT pv.verdict_id AS verdict_id, pv.rule_version_id AS rule_version_id, pv.judge_id AS judge_id,
       pv.f AS f, pv.e AS e,
       CASE WHEN s.correct IS NOT NULL THEN (CASE WHEN s.correct THEN 1 ELSE 0 END)
            WHEN 2 * pv.r > pv.n THEN 1
            WHEN 2 * pv.r < pv.n THEN 0 END AS t,
       {weight} AS w,
       CASE WHEN pv.p IS NULL THEN 1 ELSE 0 END AS o,
       pv.n AS n, pv.fc - 2 * (pv.fc / 2) AS fc, pv.lc - 2 * (pv.lc / 2) AS lc{extra}
FROM ({per_verdict}) pv
LEFT JOIN {settlement} s ON s.verdict_id = pv.verdict_id{extra_join}
"""


def resolved_verdicts_sql(
    where: str, *, per_verdict_extra: str = "", extra: str = "", extra_join: str = ""
) -> str:
    """Return the SELECT of resolved verdicts (columns verdict_id, rule_version_id, judge_id, f,
    e, t, w, o, n, fc, lc, then `extra`) over the marked verdicts (alias v) passing `where`."""
    return _RESOLVED.format(
        per_verdict=_PER_VERDICT.format(where=where, pv_extra=per_verdict_extra, **TABLES),
        extra=extra,
        extra_join=extra_join,
        weight=weight_sql("pv.p"),
        **TABLES,
    )


# Per errored verdict (alias e): its call's truth b, settled by the humans on the other verdicts of
# the same call and rule version. A marked verdict's cell says whether the rule was broken there:
# tp (3) and fn (0) say broken, fp (2) and tn (1) say not; a tie (4) settles nothing. b is 1
# (broken) or 0 (not) when every such verdict says the same, NULL when none does or they differ.
# Its weight is theirs (1 / the largest inclusion probability of the call's marks). Grouped by the
# verdict's key (rule version, judge, call: one errored verdict each), so the partial index
# verdict_errored, which holds just the errored verdicts and those columns, is all it reads of
# them; the other verdicts are found by the key index, the call's and rule version's prefix.
_ERRORED = """
SELECT e.rule_version_id AS rule_version_id, e.judge_id AS judge_id,
       e.transcript_id AS transcript_id,
       CASE WHEN COUNT(t.verdict_id) = 0 THEN NULL
            WHEN SUM(CASE WHEN t.cell IN (0, 3) THEN 1 ELSE 0 END) = COUNT(t.verdict_id) THEN 1
            WHEN SUM(CASE WHEN t.cell IN (0, 3) THEN 1 ELSE 0 END) = 0 THEN 0 END AS b,
       COALESCE(MIN(t.weight), 1) AS w
FROM {verdict} e
{joins}
LEFT JOIN {verdict} o ON o.transcript_id = e.transcript_id
     AND o.rule_version_id = e.rule_version_id AND o.judge_id <> e.judge_id
LEFT JOIN {tally} t ON t.verdict_id = o.id AND t.cell < 4
WHERE e.error <> ''{conds}
GROUP BY e.rule_version_id, e.judge_id, e.transcript_id
"""


def errored_verdicts_sql(joins: str = "", conds: str = "") -> str:
    """Return the SELECT of errored verdicts (alias e; columns rule_version_id, judge_id,
    transcript_id, b, w) with their call's settled truth b; `joins` and `conds` (ANDed, each
    starting with AND) narrow them."""
    return _ERRORED.format(joins=joins, conds=conds, **TABLES)
