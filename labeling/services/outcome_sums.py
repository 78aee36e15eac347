"""The outcome sums: the outcomes report's figures, precomputed per question.

Four tables (labeling.models): `OutcomeCall`, one row per rated call and question (mean rating,
weight, agent version, day, external id, flagged or not: the bad ones nothing flagged are listed
from it); `OutcomeDaySums`, their sums per question, agent version and day
(the figures per version, week and day add these); `OutcomeCheck`, one row per rated call,
question and check (fired or not) with the call's outcome; `OutcomeCheckSums`, their count and
weighted sums per question, check and side (what predicts the outcome).

All are kept by database triggers in the same transaction as the write that changed what they
depend on, whoever wrote it (the rating service, imports, `verdicts_import`'s COPY, judge runs,
the conversation judge, the admin, a test's factory): outcome ratings, verdicts, conversation
scores, a sample item's inclusion probability or an assignment's item. A change refreshes the
calls it touched: their old rows are subtracted from the sums, recomputed from the sources, and
added back. Verdicts of calls nobody rated cost the import only a look-up per call.

A call's agent version, start or external id changing (evals_transcript) refreshes it too. What
the triggers do not follow: renaming a rule's id or a judge, changing a judge's kind (the check's
name and source are copied), or changing DOCKET_TIME_ZONE (days are cut in TIME_ZONE);
`outcome_sums_rebuild` puts that right, and its `--check` compares the four tables with a full
recompute (exit 1 on a difference; sums to within 1e-9, as adding and subtracting floats call by
call rounds).

On PostgreSQL the verdict, rating and score triggers are per statement (transition tables), so a
COPY of 400,000 verdicts refreshes each rated call once; SQLite's are per row. The triggers are
(re)installed after every `migrate`, as the verdict tally's are.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from dataclasses import dataclass

from django.conf import settings
from django.db import connection as default_connection
from django.db import transaction

from core.sql import empty_while_filled, sqlite_row_trigger, tables_empty, triggers_install
from labeling.models import (
    BAD_AT_MOST,
    OutcomeCall,
    OutcomeCheck,
    OutcomeCheckSums,
    OutcomeDaySums,
)
from labeling.selectors.outcomes import ANY_CHECK as ANY
from labeling.selectors.outcomes import CONVERSATION_SCORE_LOW
from labeling.selectors.resolution import weight_sql

logger = logging.getLogger(__name__)

CALLS = OutcomeCall._meta.db_table
CHECKS = OutcomeCheck._meta.db_table
CALL_COLUMNS = (
    "question_id, transcript_id, agent_version_id, day, x, ratings, outside, w, "
    "external_id, flagged"
)
CHECK_COLUMNS = "question_id, transcript_id, src, chk, fired, x, w"
BAD = f"x <= {BAD_AT_MOST}"


@dataclass(frozen=True)
class Sums:
    """A sums table: its key and (column, aggregate over the rows of its source) pairs."""

    table: str
    source: str
    key: str
    sums: tuple[tuple[str, str], ...]

    @property
    def columns(self) -> str:
        return ", ".join(c for c, _ in self.sums)


CHECK_SUMS = Sums(
    OutcomeCheckSums._meta.db_table,
    CHECKS,
    "question_id, src, chk, fired",
    (
        ("n", "COUNT(*)"),
        ("bad", f"SUM(CASE WHEN {BAD} THEN 1 ELSE 0 END)"),
        ("w", "SUM(w)"),
        ("wx", "SUM(w * x)"),
        ("w2", "SUM(w * w)"),
        ("w2x", "SUM(w * w * x)"),
        ("w2x2", "SUM(w * w * x * x)"),
    ),
)
DAY_SUMS = Sums(
    OutcomeDaySums._meta.db_table,
    CALLS,
    "question_id, agent_version_id, day",
    (
        ("n", "COUNT(*)"),
        ("ratings", "SUM(ratings)"),
        ("outside", "SUM(outside)"),
        ("bad", f"SUM(CASE WHEN {BAD} THEN 1 ELSE 0 END)"),
        ("sx", "SUM(x)"),
        ("w", "SUM(w)"),
        ("wx", "SUM(w * x)"),
        ("w2", "SUM(w * w)"),
        ("w2x", "SUM(w * w * x)"),
        ("w2x2", "SUM(w * w * x * x)"),
        ("wbad", f"SUM(CASE WHEN {BAD} THEN w ELSE 0 END)"),
        ("w2bad", f"SUM(CASE WHEN {BAD} THEN w * w ELSE 0 END)"),
    ),
)
SUMS = (CHECK_SUMS, DAY_SUMS)


def _day_sql(ts: str, vendor: str) -> str:
    """The date of the timestamp `ts` in TIME_ZONE (as timezone.localtime gives it)."""
    tz = settings.TIME_ZONE
    if vendor == "postgresql":
        return f"CAST(({ts} AT TIME ZONE '{tz}') AS date)"
    if tz == "UTC":
        return f"date({ts})"
    return f"django_datetime_cast_date({ts}, '{tz}', 'UTC')"  # Django's own SQLite function


def calls_select_sql(where: str, vendor: str) -> str:
    """Return the SELECT of OutcomeCall rows (CALL_COLUMNS) of the rated calls whose transcript id
    passes `where` (a condition on `tid`, "" for all): the same outcome and weight as
    labeling.selectors.outcomes.call_outcomes; flagged when any non-errored verdict on the call
    was (as checks_select_sql's ANY row fires)."""
    cond = f"AND {where.replace('tid', 'r.transcript_id')}" if where else ""
    flagged = (
        "SELECT 1 FROM evals_verdict v WHERE v.transcript_id = r.transcript_id "
        "AND v.error = '' AND v.flagged"
    )
    at = "COALESCE(t.started_at, t.imported_at)"
    return f"""
SELECT r.question_id AS question_id, r.transcript_id AS transcript_id,
       t.agent_version_id AS agent_version_id, {_day_sql(at, vendor)} AS day,
       AVG(CAST(r.rating AS DOUBLE PRECISION)) AS x, COUNT(*) AS ratings,
       CASE WHEN MAX(i.inclusion_probability) IS NULL THEN 1 ELSE 0 END AS outside,
       {weight_sql("MAX(i.inclusion_probability)")} AS w, t.external_id AS external_id,
       CASE WHEN EXISTS ({flagged}) THEN 1 ELSE 0 END AS flagged
FROM labeling_outcomerating r
JOIN evals_transcript t ON t.id = r.transcript_id
LEFT JOIN labeling_assignment a ON a.id = r.assignment_id
LEFT JOIN labeling_sampleitem i ON i.id = a.item_id
WHERE 1 = 1 {cond}
GROUP BY r.question_id, r.transcript_id, t.agent_version_id, t.started_at, t.imported_at,
         t.external_id"""


def checks_select_sql(where: str, calls: str) -> str:
    """Return the SELECT of OutcomeCheck rows (CHECK_COLUMNS) of the rated calls whose transcript
    id passes `where` (a condition on a column `tid`, "" for all), their outcomes from `calls` (a
    table or parenthesised SELECT of CALL_COLUMNS): per (judge kind, rule)
    fired when any of its non-errored verdicts was flagged; per conversation judge, fired at a
    score of CONVERSATION_SCORE_LOW or less (errored scores say nothing); and ANY, fired when any
    non-errored verdict was flagged."""
    cond = f"AND {where.replace('tid', '{t}')}" if where else ""
    fired = "MAX(CASE WHEN v.flagged THEN 1 ELSE 0 END)"
    return f"""
SELECT o.question_id AS question_id, o.transcript_id AS transcript_id, f.src AS src,
       f.chk AS chk, f.fired AS fired, o.x AS x, o.w AS w
FROM {calls} o
JOIN (
    SELECT v.transcript_id AS tid, j.kind AS src, ru.rule_id AS chk, {fired} AS fired
    FROM evals_verdict v
    JOIN evals_judge j ON j.id = v.judge_id
    JOIN evals_ruleversion rv ON rv.id = v.rule_version_id
    JOIN evals_rule ru ON ru.id = rv.rule_id
    WHERE v.error = '' {cond.format(t="v.transcript_id")}
    GROUP BY v.transcript_id, j.kind, ru.rule_id
    UNION ALL
    SELECT s.transcript_id, 'conversation', j.name,
           MAX(CASE WHEN s.score <= {CONVERSATION_SCORE_LOW} THEN 1 ELSE 0 END)
    FROM evals_conversationscore s JOIN evals_judge j ON j.id = s.judge_id
    WHERE s.error = '' AND s.score IS NOT NULL {cond.format(t="s.transcript_id")}
    GROUP BY s.transcript_id, j.name
    UNION ALL
    SELECT v.transcript_id, '{ANY}', '', {fired}
    FROM evals_verdict v
    WHERE v.error = '' {cond.format(t="v.transcript_id")}
    GROUP BY v.transcript_id
) f ON f.tid = o.transcript_id
WHERE 1 = 1 {cond.format(t="o.transcript_id")}"""


def sums_select_sql(sums: Sums, source: str, where: str = "") -> str:
    """Return the SELECT of `sums` rows (its key, then its sums as s0, s1, ...) over the rows of
    `source` (a table or a parenthesised SELECT of its source's columns) that pass `where`."""
    aggs = ", ".join(f"{expr} AS s{i}" for i, (_, expr) in enumerate(sums.sums))
    return f"SELECT {sums.key}, {aggs} FROM {source} c WHERE 1 = 1 {where} GROUP BY {sums.key}"


def _fold_sql(sums: Sums, rhs: str, sign: int) -> str:
    """Add (sign 1) or subtract (-1) the source rows of the calls `rhs` to the sums."""
    signed = ", ".join(f"{sign} * s{i}" for i in range(len(sums.sums)))
    update = ", ".join(f"{c} = {sums.table}.{c} + excluded.{c}" for c, _ in sums.sums)
    inner = sums_select_sql(sums, sums.source, f"AND c.transcript_id {rhs}")
    return (
        f"INSERT INTO {sums.table} ({sums.key}, {sums.columns}) "
        f"SELECT {sums.key}, {signed} FROM ({inner}) d "
        f"WHERE 1 = 1 ON CONFLICT ({sums.key}) DO UPDATE SET {update}"
    )


def _refresh_statements(rhs: str, vendor: str) -> list[str]:
    """Statements refreshing the calls whose transcript id is `rhs` ("= NEW.transcript_id",
    "= ANY(p_ids)"): subtract their rows from the sums, recompute them, add them back."""
    return [
        *(_fold_sql(sums, rhs, -1) for sums in SUMS),
        f"DELETE FROM {CHECKS} WHERE transcript_id {rhs}",
        f"DELETE FROM {CALLS} WHERE transcript_id {rhs}",
        f"INSERT INTO {CALLS} ({CALL_COLUMNS}) {calls_select_sql(f'tid {rhs}', vendor)}",
        f"INSERT INTO {CHECKS} ({CHECK_COLUMNS}) {checks_select_sql(f'tid {rhs}', CALLS)}",
        *(_fold_sql(sums, rhs, 1) for sums in SUMS),
        *(f"DELETE FROM {sums.table} WHERE n = 0" for sums in SUMS),
    ]


# (table, event, rhs) of SQLite's row triggers; PostgreSQL's come from the same lists.
_CALL_TABLES = ("labeling_outcomerating", "evals_verdict", "evals_conversationscore")
# A call's version, day and external id come from these columns of evals_transcript.
_CALL_MOVES = ("agent_version_id", "started_at", "imported_at", "external_id")
_RATINGS_OF_ASSIGNMENT = "SELECT transcript_id FROM labeling_outcomerating WHERE assignment_id = "
_RATINGS_OF_ITEM = (
    "SELECT r.transcript_id FROM labeling_outcomerating r "
    "JOIN labeling_assignment a ON a.id = r.assignment_id WHERE a.item_id = "
)


def _sqlite_sql() -> list[str]:
    triggers = []
    for table in _CALL_TABLES:
        triggers += [
            (table, "ins", "INSERT", "", "= NEW.transcript_id"),
            (table, "del", "DELETE", "", "= OLD.transcript_id"),
            (table, "upd", "UPDATE", "", "IN (OLD.transcript_id, NEW.transcript_id)"),
        ]
    triggers += [
        (
            "labeling_assignment",
            "upd",
            "UPDATE OF item_id",
            "OLD.item_id IS NOT NEW.item_id",
            f"IN ({_RATINGS_OF_ASSIGNMENT}NEW.id)",
        ),
        (
            "labeling_sampleitem",
            "upd",
            "UPDATE OF inclusion_probability",
            "OLD.inclusion_probability IS NOT NEW.inclusion_probability",
            f"IN ({_RATINGS_OF_ITEM}NEW.id)",
        ),
        (
            "evals_transcript",
            "upd",
            f"UPDATE OF {', '.join(_CALL_MOVES)}",
            " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in _CALL_MOVES),
            "= NEW.id",
        ),
    ]
    out = []
    for table, suffix, event, when, rhs in triggers:
        out += sqlite_row_trigger(
            f"docket_outcome_{table}_{suffix}",
            table,
            event,
            when,
            _refresh_statements(rhs, "sqlite"),
        )
    return out


def _postgres_sql() -> list[str]:
    statements = ";\n    ".join(_refresh_statements("= ANY(p_ids)", "postgresql"))
    refresh = f"""
CREATE OR REPLACE FUNCTION docket_outcome_refresh(p_ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $body$
BEGIN
    IF p_ids IS NULL OR cardinality(p_ids) = 0 THEN
        RETURN;
    END IF;
    -- Serialise writers of one call (in id order); the statements then run in a fresh snapshot.
    PERFORM 1 FROM evals_transcript WHERE id = ANY(p_ids) ORDER BY id FOR NO KEY UPDATE;
    {statements};
END
$body$"""
    # Verdicts of calls nobody rated need nothing; ratings and scores always refresh their calls.
    rated = "WHERE EXISTS (SELECT 1 FROM labeling_outcomerating r WHERE r.transcript_id = d.t)"
    rated_or_kept = f"{rated} OR EXISTS (SELECT 1 FROM {CHECKS} c WHERE c.transcript_id = d.t)"
    on_rows = f"""
CREATE OR REPLACE FUNCTION docket_outcome_on_rows() RETURNS trigger
LANGUAGE plpgsql AS $body$
DECLARE ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        ids := ARRAY(SELECT d.t FROM (SELECT DISTINCT transcript_id AS t FROM new_rows) d
                     {rated} ORDER BY d.t);
    ELSIF TG_OP = 'DELETE' THEN
        ids := ARRAY(SELECT d.t FROM (SELECT DISTINCT transcript_id AS t FROM old_rows) d
                     {rated_or_kept} ORDER BY d.t);
    ELSE
        ids := ARRAY(SELECT d.t FROM (SELECT transcript_id AS t FROM new_rows
                                      UNION SELECT transcript_id FROM old_rows) d
                     {rated_or_kept} ORDER BY d.t);
    END IF;
    PERFORM docket_outcome_refresh(ids);
    RETURN NULL;
END
$body$"""
    on_assignment, on_item = (
        f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    PERFORM docket_outcome_refresh(ARRAY(SELECT DISTINCT t.transcript_id
        FROM ({ratings_of}NEW.id) t ORDER BY 1));
    RETURN NULL;
END
$body$"""
        for name, ratings_of in (
            ("docket_outcome_on_assignment", _RATINGS_OF_ASSIGNMENT),
            ("docket_outcome_on_sampleitem", _RATINGS_OF_ITEM),
        )
    )
    on_transcript = """
CREATE OR REPLACE FUNCTION docket_outcome_on_transcript() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    IF EXISTS (SELECT 1 FROM labeling_outcomerating WHERE transcript_id = NEW.id) THEN
        PERFORM docket_outcome_refresh(ARRAY[NEW.id]);
    END IF;
    RETURN NULL;
END
$body$"""
    out = [refresh, on_rows, on_assignment, on_item, on_transcript]
    for table in _CALL_TABLES:
        for event, ref in (
            ("INSERT", "NEW TABLE AS new_rows"),
            ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
            ("DELETE", "OLD TABLE AS old_rows"),
        ):
            name = f"docket_outcome_{event.lower()}"
            out += [
                f"DROP TRIGGER IF EXISTS {name} ON {table}",
                (
                    f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {ref} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION docket_outcome_on_rows()"
                ),
            ]
    for table, columns, fn in (
        ("labeling_assignment", ("item_id",), "docket_outcome_on_assignment"),
        ("labeling_sampleitem", ("inclusion_probability",), "docket_outcome_on_sampleitem"),
        ("evals_transcript", _CALL_MOVES, "docket_outcome_on_transcript"),
    ):
        when = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in columns)
        out += [
            f"DROP TRIGGER IF EXISTS docket_outcome ON {table}",
            (
                f"CREATE TRIGGER docket_outcome AFTER UPDATE OF {', '.join(columns)} ON {table} "
                f"FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION {fn}()"
            ),
        ]
    return out


TRIGGER_TABLES = (
    *_CALL_TABLES,
    "labeling_assignment",
    "labeling_sampleitem",
    "evals_transcript",
    CALLS,
    CHECKS,
    *(sums.table for sums in SUMS),
)
OWN_TABLES = (CALLS, CHECKS, *(sums.table for sums in SUMS))


def outcome_triggers_install(*, connection=None) -> bool:
    """(Re)create the outcome sums' triggers (idempotent); False when the tables are not there."""
    return triggers_install(
        connection or default_connection,
        what="outcome sums",
        tables=TRIGGER_TABLES,
        postgres=_postgres_sql,
        sqlite=_sqlite_sql,
    )


def _fresh(connection) -> list[tuple[str, str, int]]:
    """Per table of the four: (table, columns, key length, the SELECT recomputing it)."""
    calls = calls_select_sql("", connection.vendor)
    checks = checks_select_sql("", f"({calls})")
    out = [
        (CALLS, CALL_COLUMNS, 2, calls),
        (CHECKS, CHECK_COLUMNS, 5, checks),
    ]
    for sums, source in ((CHECK_SUMS, checks), (DAY_SUMS, calls)):
        key_len = len(sums.key.split(","))
        out.append(
            (
                sums.table,
                f"{sums.key}, {sums.columns}",
                key_len,
                sums_select_sql(sums, f"({source})"),
            )
        )
    return out


def outcome_sums_rebuild(*, connection=None) -> int:
    """Recompute the four tables from the sources; return how many rated calls there are. Holds
    the ratings, verdicts and scores still while it runs (PostgreSQL: SHARE lock)."""
    connection = connection or default_connection
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(f"LOCK TABLE {', '.join(_CALL_TABLES)} IN SHARE MODE")
        tables_empty(cursor, OWN_TABLES)
        cursor.execute(
            f"INSERT INTO {CALLS} ({CALL_COLUMNS}) {calls_select_sql('', connection.vendor)}"
        )
        n = cursor.rowcount
        cursor.execute(f"INSERT INTO {CHECKS} ({CHECK_COLUMNS}) {checks_select_sql('', CALLS)}")
        for sums in SUMS:
            cursor.execute(
                f"INSERT INTO {sums.table} ({sums.key}, {sums.columns}) "
                f"{sums_select_sql(sums, sums.source)}"
            )
    logger.info("outcome_sums_rebuilt", extra={"calls": n})
    return n


def outcome_sums_rebuild_if_empty(*, connection=None) -> int | None:
    """Rebuild when no outcome row exists while ratings do (ratings made before the tables)."""
    connection = connection or default_connection
    if not empty_while_filled(CALLS, "labeling_outcomerating", connection=connection):
        return None
    return outcome_sums_rebuild(connection=connection)


def _plain(row) -> tuple:
    """The row with its dates as text (SQLite returns a computed date as text, a column's as a
    date)."""
    return tuple(v.isoformat() if isinstance(v, dt.date) else v for v in row)


def _close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        # The sums are added and subtracted call by call: equal to a recompute up to rounding.
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def outcome_sums_differences(*, connection=None) -> int:
    """Return how many rows of the four tables differ from a full recompute (0 when right): a
    row missing, extra, repeated or with another value (sums to within rounding)."""
    connection = connection or default_connection
    differ = 0
    with connection.cursor() as cursor:
        for table, columns, key_len, fresh in _fresh(connection):
            cursor.execute(f"SELECT * FROM ({fresh}) a")
            want = {r[:key_len]: r[key_len:] for r in map(_plain, cursor.fetchall())}
            cursor.execute(f"SELECT {columns} FROM {table}")
            have = {}
            for r in map(_plain, cursor.fetchall()):
                differ += tuple(r[:key_len]) in have
                have[tuple(r[:key_len])] = tuple(r[key_len:])
            for key in want.keys() | have.keys():
                a, b = want.get(key), have.get(key)
                if a is None or b is None or not all(map(_close, a, b)):
                    logger.warning("outcome_sums_differ", extra={"table": table, "key": key})
                    differ += 1
    return differ
